// Unit tests of the vAPI tagging client against a small in-process fake of the /rest endpoint
// (session handling, 401 re-login, credential rotation, malformed answers). The behaviour against
// the govmomi simulator is covered by tagging_vcsim_test.cc.
#include "vsphere/tagging.h"

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace ccm::vsphere {
namespace {

using nlohmann::json;
using testing::HasSubstr;

class MutableCredentials : public CredentialSource {
 public:
  void Set(std::string user, std::string pass) {
    absl::MutexLock l(&mu_);
    c_ = Credentials{std::move(user), Secret(std::move(pass))};
    ++gen_;
  }
  absl::StatusOr<Credentials> Get(absl::string_view) const override {
    absl::MutexLock l(&mu_);
    if (gen_ == 0) return absl::NotFoundError("secret not synced");
    return c_;
  }
  uint64_t generation() const override {
    absl::MutexLock l(&mu_);
    return gen_;
  }

 private:
  mutable absl::Mutex mu_;
  Credentials c_ ABSL_GUARDED_BY(mu_);
  uint64_t gen_ ABSL_GUARDED_BY(mu_) = 0;
};

// Fake vAPI: users admin/secret and admin/rotated, tags z1 (zone) and r1 (region).
class FakeVapi {
 public:
  FakeVapi() {
    s_.Post("/rest/com/vmware/cis/session",
            [this](const httplib::Request& r, httplib::Response& w) {
              absl::MutexLock l(&mu_);
              ++count_["login"];
              std::string auth = r.get_header_value("Authorization");
              std::string decoded;
              absl::Base64Unescape(auth.substr(std::min<size_t>(auth.size(), 6)), &decoded);
              if (!absl::StartsWith(auth, "Basic ") || !passwords_.count(decoded)) {
                w.status = 401;
                return;
              }
              std::string id = absl::StrCat("s", ++next_);
              sessions_.insert(id);
              w.set_content(json{{"value", id}}.dump(), "application/json");
            });
    s_.Delete("/rest/com/vmware/cis/session",
              [this](const httplib::Request& r, httplib::Response& w) {
                absl::MutexLock l(&mu_);
                ++count_["logout"];
                sessions_.erase(r.get_header_value("vmware-api-session-id"));
              });
    s_.Get(R"(/rest/com/vmware/cis/tagging/tag/id:(.*))",
           [this](const httplib::Request& r, httplib::Response& w) {
             if (!Authorized(r, w, "get-tag")) return;
             std::string id = r.matches[1];
             if (id != "z1" && id != "r1") {
               w.status = 404;
               w.set_content(R"({"type":"com.vmware.vapi.std.errors.not_found","value":
                 {"messages":[{"default_message":"tag not found"}]}})",
                             "application/json");
               return;
             }
             json t = {{"id", id},
                       {"name", id == "z1" ? "zone-a" : "region-1"},
                       {"category_id", id == "z1" ? "c-zone" : "c-region"}};
             w.set_content(json{{"value", t}}.dump(), "application/json");
           });
    s_.Get(R"(/rest/com/vmware/cis/tagging/category/id:(.*))",
           [this](const httplib::Request& r, httplib::Response& w) {
             if (!Authorized(r, w, "get-category")) return;
             std::string id = r.matches[1];
             json c = {{"id", id},
                       {"name", id == "c-zone" ? "k8s-zone" : "k8s-region"},
                       {"cardinality", "SINGLE"}};
             w.set_content(json{{"value", c}}.dump(), "application/json");
           });
    s_.Post("/rest/com/vmware/cis/tagging/tag-association",
            [this](const httplib::Request& r, httplib::Response& w) {
              if (!Authorized(r, w, "attached")) return;
              {
                absl::MutexLock l(&mu_);
                if (malformed_) {
                  w.set_content(R"({"value":[{"object_id":)", "application/json");
                  return;
                }
              }
              EXPECT_EQ(r.get_param_value("~action"), "list-attached-tags-on-objects");
              json req = json::parse(r.body);
              json out = json::array();
              for (const json& o : req["object_ids"]) {
                json ids = json::array();
                if (o["id"] == "domain-c1") ids.push_back("z1");
                if (o["id"] == "datacenter-2") ids.push_back("r1");
                if (o["id"] == "vm-9") ids.push_back("gone");
                out.push_back({{"object_id", o}, {"tag_ids", ids}});
              }
              w.set_content(json{{"value", out}}.dump(), "application/json");
            });
    port_ = s_.bind_to_any_port("127.0.0.1");
    t_ = std::thread([this] { s_.listen_after_bind(); });
    while (!s_.is_running()) std::this_thread::yield();
    passwords_ = {"admin:secret", "admin:rotated"};
  }
  ~FakeVapi() {
    s_.stop();
    t_.join();
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_, "/sdk"); }
  int count(const std::string& k) {
    absl::MutexLock l(&mu_);
    return count_[k];
  }
  void InvalidateSessions() {
    absl::MutexLock l(&mu_);
    sessions_.clear();
  }
  size_t live_sessions() {
    absl::MutexLock l(&mu_);
    return sessions_.size();
  }
  void SetMalformed(bool m) {
    absl::MutexLock l(&mu_);
    malformed_ = m;
  }

 private:
  bool Authorized(const httplib::Request& r, httplib::Response& w, const std::string& what) {
    absl::MutexLock l(&mu_);
    ++count_[what];
    if (!sessions_.count(r.get_header_value("vmware-api-session-id"))) {
      w.status = 401;
      return false;
    }
    return true;
  }

  httplib::Server s_;
  std::thread t_;
  int port_ = 0;
  absl::Mutex mu_;
  std::set<std::string> passwords_;
  std::set<std::string> sessions_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> count_ ABSL_GUARDED_BY(mu_);
  int next_ ABSL_GUARDED_BY(mu_) = 0;
  bool malformed_ ABSL_GUARDED_BY(mu_) = false;
};

class TaggingTest : public testing::Test {
 protected:
  TaggingTest() { creds_.Set("admin", "secret"); }
  std::unique_ptr<TaggingClient> NewClient() {
    return std::make_unique<TaggingClient>(TaggingOptions{"vc1", fake_.url(), {}}, creds_);
  }
  FakeVapi fake_;
  MutableCredentials creds_;
  const std::vector<Moref> objects_ = {{"ClusterComputeResource", "domain-c1"},
                                       {"Datacenter", "datacenter-2"},
                                       {"HostSystem", "host-3"}};
};

TEST_F(TaggingTest, BatchResolvesTagAndCategoryNamesWithOneSession) {
  auto client = NewClient();
  for (int i = 0; i < 5; ++i) {
    auto tags = client->ListAttachedTags(objects_);
    ASSERT_TRUE(tags.ok()) << tags.status();
    ASSERT_EQ(tags->size(), 3u);
    EXPECT_EQ((*tags)[0].object, objects_[0]);
    ASSERT_EQ((*tags)[0].tags.size(), 1u);
    EXPECT_EQ((*tags)[0].tags[0].name, "zone-a");
    EXPECT_EQ((*tags)[0].tags[0].category_name, "k8s-zone");
    ASSERT_EQ((*tags)[1].tags.size(), 1u);
    EXPECT_EQ((*tags)[1].tags[0].category_name, "k8s-region");
    EXPECT_TRUE((*tags)[2].tags.empty());
  }
  EXPECT_EQ(fake_.count("login"), 1);
  EXPECT_EQ(fake_.count("attached"), 5);
  EXPECT_EQ(fake_.count("get-tag"), 2);       // once per tag, then cached
  EXPECT_EQ(fake_.count("get-category"), 2);  // once per category
  TaggingStats st = client->stats();
  EXPECT_EQ(st.logins, 1u);
  EXPECT_EQ(st.cache_misses, 4u);
  EXPECT_EQ(st.cache_hits, 8u);
  client.reset();  // deletes the session
  EXPECT_EQ(fake_.count("logout"), 1);
  EXPECT_EQ(fake_.live_sessions(), 0u);
}

TEST_F(TaggingTest, LogsInAgainOnceAfter401) {
  auto client = NewClient();
  ASSERT_TRUE(client->ListAttachedTags(objects_).ok());
  fake_.InvalidateSessions();
  auto tags = client->ListAttachedTags(objects_);
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_EQ(fake_.count("login"), 2);
  EXPECT_EQ(client->stats().logins, 2u);
}

TEST_F(TaggingTest, NewCredentialsMeanANewSession) {
  auto client = NewClient();
  ASSERT_TRUE(client->ListAttachedTags(objects_).ok());
  creds_.Set("admin", "rotated");
  ASSERT_TRUE(client->ListAttachedTags(objects_).ok());
  EXPECT_EQ(fake_.count("login"), 2);
  EXPECT_EQ(fake_.count("logout"), 1);  // the old session was deleted
  EXPECT_EQ(fake_.live_sessions(), 1u);
}

TEST_F(TaggingTest, WrongPasswordIsAClearError) {
  creds_.Set("admin", "bad-pass-123");
  auto client = NewClient();
  auto tags = client->ListAttachedTags(objects_);
  ASSERT_FALSE(tags.ok());
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(tags.status().message()), HasSubstr("HTTP 401"));
  EXPECT_THAT(std::string(tags.status().message()), HasSubstr("as admin"));
  EXPECT_THAT(std::string(tags.status().message()), testing::Not(HasSubstr("bad-pass-123")));
  EXPECT_EQ(fake_.count("attached"), 0);
  EXPECT_EQ(client->stats().errors, 1u);
}

TEST_F(TaggingTest, NoCredentialsMeansNoLogin) {
  MutableCredentials none;
  TaggingClient client(TaggingOptions{"vc1", fake_.url(), {}}, none);
  auto tags = client.ListAttachedTags(objects_);
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kFailedPrecondition) << tags.status();
  EXPECT_EQ(fake_.count("login"), 0);
}

TEST_F(TaggingTest, MalformedJsonIsAnError) {
  auto client = NewClient();
  fake_.SetMalformed(true);
  auto tags = client->ListAttachedTags(objects_);
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kDataLoss) << tags.status();
  EXPECT_THAT(std::string(tags.status().message()), HasSubstr("malformed JSON"));
}

TEST_F(TaggingTest, UnknownTagNamesTheVapiErrorType) {
  auto client = NewClient();
  auto tags = client->ListAttachedTags({{"VirtualMachine", "vm-9"}});
  ASSERT_FALSE(tags.ok());
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(tags.status().message()),
              HasSubstr("HTTP 404 (com.vmware.vapi.std.errors.not_found: tag not found)"));
  EXPECT_THAT(std::string(tags.status().message()), HasSubstr("VirtualMachine:vm-9"));
}

TEST_F(TaggingTest, ConcurrentCallersShareOneSession) {
  auto client = NewClient();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 5; ++j) {
        if (!client->ListAttachedTags(objects_).ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(fake_.count("login"), 1);
}

TEST_F(TaggingTest, NetworkErrorIsUnavailable) {
  TaggingClient client(TaggingOptions{"vc1", "http://127.0.0.1:1", {}}, creds_);
  auto tags = client.ListAttachedTags(objects_);
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kUnavailable) << tags.status();
}

struct JsonCase {
  const char* name;
  const char* json;
  bool ok;
  size_t entries;
};

TEST(TaggingJsonTest, ParseAttachedTags) {
  const JsonCase cases[] = {
      {"null value", "null", true, 0},
      {"empty", "[]", true, 0},
      {"null tag ids", R"([{"object_id":{"type":"HostSystem","id":"host-1"},"tag_ids":null}])",
       true, 1},
      {"two", R"([{"object_id":{"type":"A","id":"a"},"tag_ids":["t"]},
                  {"object_id":{"type":"B","id":"b"}}])",
       true, 2},
      {"not a list", R"({"a":1})", false, 0},
      {"no object id", R"([{"tag_ids":[]}])", false, 0},
      {"tag id not string", R"([{"object_id":{"type":"A","id":"a"},"tag_ids":[1]}])", false, 0},
      {"truncated", R"([{"object_id":)", false, 0},
  };
  for (const JsonCase& c : cases) {
    auto r = ParseAttachedTags(c.json);
    EXPECT_EQ(r.ok(), c.ok) << c.name << ": " << r.status();
    if (r.ok()) {
      EXPECT_EQ(r->size(), c.entries) << c.name;
    }
  }
}

TEST(TaggingJsonTest, ParseIdList) {
  EXPECT_THAT(*ParseIdList(R"(["urn:a","urn:b"])"), ::testing::ElementsAre("urn:a", "urn:b"));
  EXPECT_TRUE(ParseIdList("[]")->empty());
  EXPECT_EQ(ParseIdList("null").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseIdList("[1]").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseIdList("[").status().code(), absl::StatusCode::kDataLoss);
}

TEST(TaggingJsonTest, RestValueAndErrors) {
  EXPECT_EQ(*RestValue(R"({"value":"abc"})"), "\"abc\"");
  EXPECT_EQ(*RestValue("{}"), "null");
  EXPECT_EQ(RestValue("[1]").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(RestValue("{").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(AttachedTagsRequest({{"HostSystem", "host-1"}}),
            R"({"object_ids":[{"id":"host-1","type":"HostSystem"}]})");
  absl::Status s = RestError(403, R"({"type":"com.vmware.vapi.std.errors.unauthorized"})", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(), "x: HTTP 403 (com.vmware.vapi.std.errors.unauthorized)");
  EXPECT_EQ(RestError(503, "oops", "x").code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(RestError(400, "", "x").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseTag(R"({"name":"x"})").ok());
  EXPECT_EQ(ParseCategory(R"({"id":"c","name":"n","cardinality":"SINGLE"})")->name, "n");
}

}  // namespace
}  // namespace ccm::vsphere
