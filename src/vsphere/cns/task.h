#pragma once
// Waiting for a vCenter task (CNS answers every change with one) through the property
// collector: the task's `info` is read with RetrievePropertiesEx until its state is success or
// error, polling with a backoff that starts at `first_poll` and grows to `max_poll`.
//
// Why polling and not WaitForUpdatesEx: a filter per task costs CreatePropertyCollector +
// CreateFilter + WaitForUpdatesEx + DestroyPropertyCollector (govmomi's task.Wait), four round
// trips for what a first short poll usually answers in one when the task is quick, and CNS
// tasks that take seconds cost a handful of polls at most.
//
// A task that vanished before it was seen done (vCenter forgets tasks after a while) has an
// unknown outcome: Unavailable, never NotFound (the caller must not think the volume is gone).

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "vsphere/client.h"
#include "vsphere/cns/wire.h"
#include "vsphere/moref.h"

namespace ccm::vsphere::cns {

struct TaskWaitOptions {
  absl::Duration first_poll = absl::Milliseconds(2);
  absl::Duration max_poll = absl::Seconds(1);
  absl::Duration timeout = absl::Minutes(5);  // the reference's CNS operation timeout (300 s)
};

// The task's final info (state success or error).
absl::StatusOr<TaskInfo> WaitForTask(Client& vim, const Moref& task, const TaskWaitOptions& o);

// True for WaitForTask's Unavailable about a task vCenter no longer knows (and the errors that
// carry it on): whoever recorded the task must find out the outcome another way.
bool IsTaskVanished(const absl::Status& s);
// That Unavailable, for `task`.
absl::Status TaskVanishedError(const Moref& task);

}  // namespace ccm::vsphere::cns
