// The tagging client against the vCenter simulator fixture: attached tags of every kind of
// ancestor in one batch, one REST login reused across calls (checked with the fixture's REST
// counters), re-login after the sessions are invalidated, and a clear error for a wrong password.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fixtures/vcsim/sim_client_options.h"
#include "fixtures/vcsim/simulator_suite.h"
#include "fixtures/vcsim/vcsim_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/static_credentials.h"
#include "vsphere/ancestry.h"
#include "vsphere/client.h"
#include "vsphere/tagging.h"

namespace ccm::vsphere {
namespace {

constexpr char kSpec[] = R"({
  "datacenters": [{
    "name": "dc1",
    "clusters": [{"name": "c1", "hosts": 2, "resource_pools": ["rp1"]}],
    "vms": [{"name": "node-1", "cluster": "c1", "host_index": 0, "resource_pool": "rp1",
             "folder": "k8s", "hostname": "node-1"}]
  }],
  "tag_categories": [{"name": "k8s-zone", "cardinality": "SINGLE"}, {"name": "k8s-region"},
                     {"name": "owner"}],
  "tags": [
    {"name": "zone-a", "category": "k8s-zone", "attach": ["/dc1/host/c1"]},
    {"name": "zone-rp", "category": "k8s-zone", "attach": ["/dc1/host/c1/Resources/rp1"]},
    {"name": "zone-host", "category": "k8s-zone", "attach": ["/dc1/host/c1/c1-host-0"]},
    {"name": "region-1", "category": "k8s-region", "attach": ["/dc1"]},
    {"name": "team-x", "category": "owner", "attach": ["/dc1/vm/k8s/node-1"]}
  ]
})";

constexpr char kLogin[] = "POST /rest/com/vmware/cis/session";
constexpr char kAttached[] =
    "POST /rest/com/vmware/cis/tagging/tag-association?~action=list-attached-tags-on-objects";

class TaggingVcsimTest : public ccm::testing::SimulatorSuite<TaggingVcsimTest> {
 public:
  static std::vector<std::string> Specs() { return {kSpec}; }

 protected:
  void SetUpTest() override { ASSERT_NE(&sim(), nullptr); }
  TaggingOptions Options() const {
    TaggingOptions o;
    o.server = "127.0.0.1";
    o.url = sim().info().url;
    o.http.tls.ca_file = sim().info().ca_file;
    return o;
  }
  int Rest(const std::string& key) {
    auto c = sim().RestCounters();
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? (*c)[key] : -1;
  }
  // The VM and every ancestor of it (host chain, resource pool chain, VM folder chain).
  std::vector<Moref> Ancestors() {
    Client client(ccm::testing::SimClientOptions(sim().info()), &creds_);
    AncestryResolver resolver(client);
    Moref vm{"VirtualMachine", sim().info().vms[0].moid};
    auto a = resolver.ResolveVms({vm});
    EXPECT_TRUE(a.ok()) << a.status();
    std::vector<Moref> out;
    std::set<Moref> seen;
    if (!a.ok() || a->empty()) return out;
    for (const auto* chain :
         {&(*a)[0].vm_chain, &(*a)[0].host_chain, &(*a)[0].resource_pool_chain}) {
      for (const InventoryRef& r : *chain) {
        if (seen.insert(r.ref).second) out.push_back(r.ref);
      }
    }
    return out;
  }

  StaticCredentialSource creds_{Credentials{"user", Secret("pass")}};
};

TEST_F(TaggingVcsimTest, OneBatchReturnsTagsOfEveryAncestorKind) {
  std::vector<Moref> objs = Ancestors();
  ASSERT_GE(objs.size(), 5u);
  ASSERT_TRUE(sim().ResetCounters().ok());
  TaggingClient tagging(Options(), creds_);
  auto tags = tagging.ListAttachedTags(objs);
  ASSERT_TRUE(tags.ok()) << tags.status();
  ASSERT_EQ(tags->size(), objs.size());
  std::map<std::string, std::string> by_type;  // object type -> "category/tag"
  for (const ObjectTags& o : *tags) {
    for (const Tag& t : o.tags) by_type[o.object.type] += t.category_name + "/" + t.name + " ";
  }
  EXPECT_EQ(by_type["Datacenter"], "k8s-region/region-1 ");
  EXPECT_EQ(by_type["ClusterComputeResource"], "k8s-zone/zone-a ");
  EXPECT_EQ(by_type["HostSystem"], "k8s-zone/zone-host ");
  EXPECT_EQ(by_type["ResourcePool"], "k8s-zone/zone-rp ");
  EXPECT_EQ(by_type["VirtualMachine"], "owner/team-x ");
  EXPECT_EQ(Rest(kAttached), 1);
}

TEST_F(TaggingVcsimTest, OneLoginReusedAcrossCallsAndLoggedOutAtTheEnd) {
  std::vector<Moref> objs = Ancestors();
  ASSERT_TRUE(sim().ResetCounters().ok());
  {
    TaggingClient tagging(Options(), creds_);
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(tagging.ListAttachedTags(objs).ok());
    EXPECT_EQ(Rest(kLogin), 1);
    EXPECT_EQ(Rest(kAttached), 20);
    TaggingStats st = tagging.stats();
    EXPECT_EQ(st.logins, 1u);
    EXPECT_EQ(st.cache_misses, 8u);  // 5 tags + 3 categories, each fetched once
    EXPECT_GT(st.cache_hits, 90u);
  }
  EXPECT_EQ(Rest("DELETE /rest/com/vmware/cis/session"), 1);
}

TEST_F(TaggingVcsimTest, LogsInAgainAfterSessionsAreInvalidated) {
  std::vector<Moref> objs = Ancestors();
  TaggingClient tagging(Options(), creds_);
  ASSERT_TRUE(tagging.ListAttachedTags(objs).ok());
  ASSERT_TRUE(sim().ResetCounters().ok());
  ASSERT_TRUE(sim().InvalidateSessions().ok());
  auto tags = tagging.ListAttachedTags(objs);
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_EQ(Rest(kLogin), 1);
  EXPECT_EQ(Rest(kAttached), 2);  // the 401 and the retry
  EXPECT_EQ(tagging.stats().logins, 2u);
}

TEST_F(TaggingVcsimTest, WrongPasswordIsAClearError) {
  StaticCredentialSource bad{Credentials{"user", Secret("not-the-password")}};
  TaggingClient tagging(Options(), bad);
  auto tags = tagging.ListAttachedTags({{"Datacenter", "datacenter-2"}});
  ASSERT_FALSE(tags.ok());
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kUnauthenticated);
  std::string msg(tags.status().message());
  EXPECT_THAT(msg, ::testing::HasSubstr("HTTP 401"));
  EXPECT_THAT(msg, ::testing::HasSubstr("as user"));
  EXPECT_THAT(msg, ::testing::Not(::testing::HasSubstr("not-the-password")));
}

}  // namespace
}  // namespace ccm::vsphere
