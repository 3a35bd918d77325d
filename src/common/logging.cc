#include "common/logging.h"

#include <atomic>
#include <mutex>

#include "spdlog/sinks/stdout_sinks.h"

namespace ccm::logging {
namespace {

std::atomic<int> g_verbosity{0};

std::shared_ptr<spdlog::logger>& Instance() {
  static auto* logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("ccm", sink);
    l->set_pattern(kKlogPattern);
    l->set_level(spdlog::level::trace);
    l->flush_on(spdlog::level::trace);
    return new std::shared_ptr<spdlog::logger>(l);
  }();
  return *logger;
}

}  // namespace

void Init(int verbosity) {
  Instance();
  SetVerbosity(verbosity);
}

void SetVerbosity(int v) { g_verbosity.store(v, std::memory_order_relaxed); }
int Verbosity() { return g_verbosity.load(std::memory_order_relaxed); }

void SetSink(std::shared_ptr<spdlog::sinks::sink> sink) {
  auto& l = Instance();
  l->sinks().clear();
  sink->set_pattern(kKlogPattern);
  l->sinks().push_back(std::move(sink));
}

spdlog::logger* Logger() { return Instance().get(); }

}  // namespace ccm::logging
