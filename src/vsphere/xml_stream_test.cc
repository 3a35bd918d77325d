#include "vsphere/xml_stream.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/chunking.h"

namespace ccm::vsphere {
namespace {

// Feeds every event into a DomBuilder (the way the update parser captures an objectSet).
class Rebuild : public XmlHandler {
 public:
  absl::Status StartElement(const char* name, const char* const* attrs) override {
    dom.Start(name, attrs);
    return absl::OkStatus();
  }
  absl::Status EndElement() override {
    if (dom.End()) doc = dom.Take();
    return absl::OkStatus();
  }
  absl::Status Text(absl::string_view text) override {
    dom.Text(text);
    return absl::OkStatus();
  }
  DomBuilder dom;
  std::shared_ptr<pugi::xml_document> doc;
};

std::string Print(const pugi::xml_node& n) {
  struct Out : pugi::xml_writer {
    void write(const void* data, size_t size) override {
      s.append(static_cast<const char*>(data), size);
    }
    std::string s;
  } out;
  n.print(out, "", pugi::format_raw);
  return out.s;
}

class DomBuilderTest : public testing::TestWithParam<Chunking> {};

// The rebuilt tree must be the one pugixml's own parse gives, so DOM readers (ApplyVmProperty,
// XsiType, ParseMoref) see no difference.
TEST_P(DomBuilderTest, SameTreeAsPugixml) {
  const char* const kDocs[] = {
      R"(<val xsi:type="ArrayOfGuestNicInfo"><GuestNicInfo><network>VM Network</network>
         <ipAddress>10.0.0.11</ipAddress><ipAddress>fe80::1</ipAddress></GuestNicInfo></val>)",
      R"(<v:obj xmlns:v="urn:vim25" type="VirtualMachine">vm-42</v:obj>)",
      "<a>&amp;&lt;&gt;&quot;&apos;&#x41;&#66;</a>",
      "<a>  leading and trailing  </a>",
      "<a>\n  <b/>\n  <c></c>\n</a>",
      "<a>mixed <b>bold</b> tail</a>",
      "<a>line1\r\nline2\rline3</a>",
      "<a x=\"t\tn\nr\r end\" y='single'/>",
      "<a>gr\xC3\xBC\xC3\x9F \xE2\x82\xAC \xF0\x9F\x98\x80</a>",
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><!-- c --><a><?pi x?><!-- c --><b>t</b></a>",
  };
  for (const char* xml : kDocs) {
    pugi::xml_document want;
    ASSERT_TRUE(want.load_string(xml)) << xml;
    Rebuild r;
    XmlStream stream(r, "test");
    for (absl::string_view piece : Split(xml, GetParam())) ASSERT_TRUE(stream.Feed(piece).ok());
    ASSERT_TRUE(stream.Finish().ok()) << xml;
    ASSERT_NE(r.doc, nullptr) << xml;
    EXPECT_EQ(Print(*r.doc), Print(want)) << xml;
    EXPECT_FALSE(r.dom.active());
  }
}

// The one known difference: CDATA becomes plain text (pugixml keeps a CDATA node); readers use
// text() and see the same value. vim25 servers do not send CDATA.
TEST_P(DomBuilderTest, CdataBecomesText) {
  const std::string xml = "<a><![CDATA[<not> & markup]]></a>";
  Rebuild r;
  XmlStream stream(r, "test");
  for (absl::string_view piece : Split(xml, GetParam())) ASSERT_TRUE(stream.Feed(piece).ok());
  ASSERT_TRUE(stream.Finish().ok());
  EXPECT_STREQ(r.doc->child("a").text().get(), "<not> & markup");
}

INSTANTIATE_TEST_SUITE_P(AllChunkings, DomBuilderTest, testing::ValuesIn(AllChunkings()),
                         [](const testing::TestParamInfo<Chunking>& p) { return p.param.name(); });

TEST(XmlStreamTest, SyntaxErrorsSayWhereAndStick) {
  Rebuild r;
  XmlStream stream(r, "malformed thing");
  ASSERT_TRUE(stream.Feed("<a>\n  <b>").ok());
  absl::Status s = stream.Feed("</a>");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()),
              testing::StartsWith("malformed thing: XML error at line 2, column 8 (byte 11): "));
  EXPECT_EQ(stream.Feed("<c/>"), s);
  EXPECT_EQ(stream.Finish(), s);
}

TEST(XmlStreamTest, HandlerErrorStopsAtOnceAndSticks) {
  struct Failing : XmlHandler {
    absl::Status StartElement(const char* name, const char* const*) override {
      ++starts;
      return absl::string_view(name) == "stop" ? absl::CancelledError("stopped here")
                                               : absl::OkStatus();
    }
    absl::Status EndElement() override { return absl::OkStatus(); }
    absl::Status Text(absl::string_view) override { return absl::OkStatus(); }
    int starts = 0;
  } h;
  XmlStream stream(h, "x");
  absl::Status s = stream.Feed("<a><b/><stop/><c/><d/>");
  EXPECT_EQ(s, absl::CancelledError("stopped here"));
  EXPECT_EQ(h.starts, 3);
  EXPECT_EQ(stream.Finish(), s);
}

TEST(XmlStreamTest, TruncatedInputFailsAtFinish) {
  Rebuild r;
  XmlStream stream(r, "x");
  ASSERT_TRUE(stream.Feed("<a><b>text</b>").ok());
  absl::Status s = stream.Finish();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("XML error at line 1"));
}

TEST(XmlStreamTest, ResetStartsANewDocument) {
  Rebuild r;
  XmlStream stream(r, "x");
  ASSERT_FALSE(stream.Feed("<a></b>").ok());
  stream.Reset();
  r.dom = DomBuilder();
  ASSERT_TRUE(stream.Feed("<z>ok</z>").ok());
  ASSERT_TRUE(stream.Finish().ok());
  EXPECT_EQ(Print(*r.doc), "<z>ok</z>");
}

TEST(XmlStreamTest, RefusesDoctypeSoNoEntityExpansion) {
  Rebuild r;
  XmlStream stream(r, "x");
  absl::Status s = stream.Feed(
      "<!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]>"
      "<l>&b;</l>");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(s.message()), testing::HasSubstr("DOCTYPE is not allowed"));
  EXPECT_EQ(r.doc, nullptr);
}

}  // namespace
}  // namespace ccm::vsphere
