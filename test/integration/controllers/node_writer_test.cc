// UpdateNodeWithRetry against the in-process API emulator: what its guarded JSON patch does when
// another writer changes the Node between the controller's read and its write.
#include "controllers/node_writer.h"

#include "controllers/node_update.h"
#include "gtest/gtest.h"
#include "integration/controllers/controllers_test_env.h"
#include "kube/errors.h"

namespace ccm::controllers {
namespace {

using testing::Env;

class NodeWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Init().ok());
    node_ = env_.CreateKubeletNode("worker-1", /*ready=*/true);
    env_.emulator.ResetRequestCounts();
  }
  // The mutation the node controller makes: a zone label, the uninitialized taint removed.
  // Before its first call returns, `meanwhile` runs as another writer.
  NodeMutation Initialise(std::function<void(kube::Json&)> meanwhile) {
    return [this, meanwhile](kube::Json& n) {
      if (calls_++ == 0 && meanwhile) env_.EditNode("worker-1", meanwhile);
      kube::SetLabel(n, "topology.kubernetes.io/zone", "zone-a");
      kube::RemoveTaint(n, kUninitializedTaintKey);
      return true;
    };
  }
  int64_t Count(const std::string& key) { return env_.emulator.RequestCount(key); }

  Env env_;
  kube::Json node_;
  int calls_ = 0;
};

TEST_F(NodeWriterTest, OtherWritersLabelNeitherConflictsNorIsLost) {
  auto r = UpdateNodeWithRetry(
      *env_.client, node_, Initialise([](kube::Json& n) { kube::SetLabel(n, "team", "blue"); }));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->written);
  kube::Json n = env_.GetNode("worker-1");
  EXPECT_EQ(kube::Label(n, "team"), "blue");
  EXPECT_EQ(kube::Label(n, "topology.kubernetes.io/zone"), "zone-a");
  EXPECT_FALSE(kube::HasTaint(n, kUninitializedTaintKey));
  EXPECT_EQ(Count("patch nodes"), 1);
  EXPECT_EQ(Count("get nodes"), 0) << "nothing to re-read";
}

TEST_F(NodeWriterTest, TaintAddedMeanwhileFailsTheTestAndIsKeptAfterTheReRead) {
  auto r = UpdateNodeWithRetry(*env_.client, node_, Initialise([](kube::Json& n) {
    kube::AddTaint(n, kube::Taint{"dedicated", "db", "NoExecute"});
  }));
  ASSERT_TRUE(r.ok()) << r.status();
  kube::Json n = env_.GetNode("worker-1");
  EXPECT_TRUE(kube::HasTaint(n, "dedicated")) << "the other writer's taint was lost";
  EXPECT_FALSE(kube::HasTaint(n, kUninitializedTaintKey));
  EXPECT_EQ(Count("patch nodes"), 2) << "a 422 from the failed test, then the write";
  EXPECT_EQ(Count("get nodes"), 1);
  EXPECT_EQ(calls_, 2) << "the change is computed again on the fresh Node";
}

TEST_F(NodeWriterTest, RejectedWriteIsReturnedNotRetried) {
  auto r = UpdateNodeWithRetry(*env_.client, node_, [](kube::Json& n) {
    kube::SetLabel(n, "topology.kubernetes.io/zone", "not a valid label value");
    return true;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::IsInvalid(r.status())) << r.status();
  EXPECT_EQ(Count("patch nodes"), 1);
  EXPECT_EQ(Count("get nodes"), 1) << "one re-read shows nothing changed meanwhile";
  EXPECT_TRUE(kube::HasTaint(env_.GetNode("worker-1"), kUninitializedTaintKey));
}

TEST_F(NodeWriterTest, NodeDeletedMeanwhileIsNotFound) {
  auto r = UpdateNodeWithRetry(*env_.client, node_, [this](kube::Json& n) {
    EXPECT_TRUE(env_.emulator.Delete("nodes", "", "worker-1").ok());
    kube::SetLabel(n, "topology.kubernetes.io/zone", "zone-a");
    return true;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(kube::IsNotFoundError(r.status())) << r.status();
  EXPECT_EQ(Count("patch nodes"), 1);
}

}  // namespace
}  // namespace ccm::controllers
