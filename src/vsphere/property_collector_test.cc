#include "vsphere/property_collector.h"

#include <atomic>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/static_credentials.h"
#include "vsphere/vm_facts.h"

namespace ccm::vsphere {
namespace {

std::string Env(const std::string& body) {
  return "<?xml version=\"1.0\"?><soapenv:Envelope "
         "xmlns:soapenv=\"http://schemas.xmlsoap.org/soap/envelope/\" "
         "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><soapenv:Body>" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

std::string VmObject(int i) {
  return absl::StrCat("<objects><obj type=\"VirtualMachine\">vm-", i,
                      "</obj><propSet><name>name</name><val xsi:type=\"xsd:string\">node-", i,
                      "</val></propSet></objects>");
}

TEST(ParseRetrieveResultTest, TokenObjectsAndMissingSet) {
  std::string xml =
      Env("<RetrievePropertiesExResponse xmlns=\"urn:vim25\"><returnval><token>t-1</token>" +
          VmObject(1) +
          "<objects><obj type=\"VirtualMachine\">vm-2</obj><missingSet><path>config</path><fault>"
          "<fault xsi:type=\"NoPermission\"><privilegeId>System.Read</privilegeId></fault>"
          "<localizedMessage>no</localizedMessage></fault></missingSet></objects>"
          "</returnval></RetrievePropertiesExResponse>");
  auto r = ParseSoapResponse(xml);
  ASSERT_TRUE(r.ok()) << r.status();
  RetrievePage p = ParseRetrieveResult(r->doc, r->returnval());
  EXPECT_EQ(p.token, "t-1");
  ASSERT_EQ(p.objects.size(), 2u);
  EXPECT_EQ(p.objects[0].GetText("name"), "node-1");
  EXPECT_FALSE(p.objects[0].Get("config"));
  ASSERT_EQ(p.objects[1].missing.size(), 1u);
  EXPECT_EQ(p.objects[1].missing[0].path, "config");
  EXPECT_EQ(p.objects[1].missing[0].fault, "NoPermission");
  EXPECT_EQ(p.objects[1].missing[0].message, "no");

  RetrievePage empty = ParseRetrieveResult(r->doc, pugi::xml_node());
  EXPECT_TRUE(empty.token.empty());
  EXPECT_TRUE(empty.objects.empty());
}

TEST(PropertyFilterSpecXmlTest, ElementOrderAndEscaping) {
  PropertyFilterSpec spec;
  spec.prop_set.push_back({"VirtualMachine", {"name", "config.extraConfig[\"a\"]"}});
  spec.object_set.push_back(
      {{"ContainerView", "session[1]"}, true, {{"v", "ContainerView", "view", false, {"v"}}}});
  EXPECT_EQ(PropertyFilterSpecXml(spec),
            "<specSet><propSet><type>VirtualMachine</type><all>false</all><pathSet>name</pathSet>"
            "<pathSet>config.extraConfig[&quot;a&quot;]</pathSet></propSet><objectSet>"
            "<obj type=\"ContainerView\">session[1]</obj><skip>true</skip>"
            "<selectSet xsi:type=\"TraversalSpec\"><name>v</name><type>ContainerView</type>"
            "<path>view</path><skip>false</skip><selectSet><name>v</name></selectSet>"
            "</selectSet></objectSet></specSet>");
}

// Serves login plus a paged RetrievePropertiesEx: 25 VMs in pages of `maxObjects`.
class PagingServer {
 public:
  PagingServer() {
    srv_.Post("/sdk", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string& b = req.body;
      if (absl::StrContains(b, "<RetrieveServiceContent")) {
        res.set_content(
            Env("<RetrieveServiceContentResponse xmlns=\"urn:vim25\"><returnval>"
                "<rootFolder type=\"Folder\">group-d1</rootFolder><propertyCollector "
                "type=\"PropertyCollector\">propertyCollector</propertyCollector>"
                "<sessionManager type=\"SessionManager\">SessionManager</sessionManager>"
                "</returnval></RetrieveServiceContentResponse>"),
            "text/xml");
      } else if (absl::StrContains(b, "<Login")) {
        res.set_header("Set-Cookie", "vmware_soap_session=\"abc\"; Path=/");
        res.set_content(Env("<LoginResponse xmlns=\"urn:vim25\"><returnval/></LoginResponse>"),
                        "text/xml");
      } else if (absl::StrContains(b, "<RetrievePropertiesEx")) {
        ++retrieve;
        last_request = b;
        int page = 10;
        auto p = b.find("<maxObjects>");
        if (p != std::string::npos) page = std::stoi(b.substr(p + 12));
        res.set_content(Page(0, page, "RetrievePropertiesExResponse"), "text/xml");
        page_size = page;
      } else if (absl::StrContains(b, "<ContinueRetrievePropertiesEx")) {
        ++cont;
        auto p = b.find("<token>");
        int start = std::stoi(b.substr(p + 7));
        res.set_content(Page(start, page_size, "ContinueRetrievePropertiesExResponse"), "text/xml");
      } else {
        res.set_content(Env("<LogoutResponse xmlns=\"urn:vim25\"/>"), "text/xml");
      }
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    t_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::yield();
  }
  ~PagingServer() {
    srv_.stop();
    t_.join();
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_, "/sdk"); }
  std::atomic<int> retrieve{0}, cont{0};
  std::atomic<int> page_size{10};
  std::string last_request;

 private:
  static std::string Page(int start, int n, const std::string& response) {
    const int total = 25;
    std::string body = "<returnval>";
    int end = std::min(total, start + n);
    if (end < total) absl::StrAppend(&body, "<token>", end, "</token>");
    for (int i = start; i < end; ++i) absl::StrAppend(&body, VmObject(i));
    absl::StrAppend(&body, "</returnval>");
    bool wrap = response == "RetrievePropertiesExResponse";
    return Env(absl::StrCat("<", response, " xmlns=\"urn:vim25\">", wrap ? body : body, "</",
                            response, ">"));
  }
  httplib::Server srv_;
  int port_ = 0;
  std::thread t_;
};

TEST(RetrievePropertiesTest, FollowsTokensAcrossPages) {
  PagingServer srv;
  StaticCredentialSource creds({"u", Secret("p")});
  ClientOptions o;
  o.url = srv.url();
  Client c(o, &creds);
  PropertyFilterSpec spec;
  spec.prop_set.push_back({"VirtualMachine", {"name"}});
  spec.object_set.push_back({{"Folder", "group-d1"}});
  auto r = RetrieveProperties(c, spec, {.max_objects = 10});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ((*r)[i].GetText("name"), absl::StrCat("node-", i));
  EXPECT_EQ(srv.retrieve, 1);
  EXPECT_EQ(srv.cont, 2);
  EXPECT_TRUE(
      absl::StrContains(srv.last_request, "<options><maxObjects>10</maxObjects></options>"));

  auto one = RetrieveProperties(c, spec, {.max_objects = 100});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 25u);
  EXPECT_EQ(srv.cont, 2);  // no further pages

  auto facts = FetchVmFacts(c, {{"VirtualMachine", "vm-0"}}, {.max_objects = 7});
  ASSERT_TRUE(facts.ok()) << facts.status();
  EXPECT_EQ(facts->vms.size(), 25u);  // the fake ignores the object set; paging still followed
}

}  // namespace
}  // namespace ccm::vsphere
