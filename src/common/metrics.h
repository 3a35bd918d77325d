#pragma once
// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
// exposition format (version 0.0.4) for /metrics. Families are created once (usually at start-up)
// and updated from any thread.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ccm::metrics {

using Labels = std::vector<std::string>;  // values, in the order of the family's label names

class Family {
 public:
  enum class Type { kCounter, kGauge, kHistogram };
  Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
         std::vector<double> buckets = {});
  // Counter: adds (v >= 0). Gauge: adds (any sign).
  void Add(const Labels& labels, double v = 1);
  // Gauge only.
  void Set(const Labels& labels, double v);
  // Histogram only.
  void Observe(const Labels& labels, double v);
  // Value of a counter/gauge series (0 when unset); for tests and health checks.
  double Value(const Labels& labels) const;
  uint64_t Count(const Labels& labels) const;  // histogram sample count
  void Render(std::string* out) const;
  const std::string& name() const { return name_; }

 private:
  struct Series {
    double value = 0;               // counter / gauge / histogram sum
    uint64_t count = 0;             // histogram
    std::vector<uint64_t> buckets;  // histogram, cumulative at render time
  };
  Series& Get(const Labels& labels) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string name_, help_;
  const Type type_;
  const std::vector<std::string> label_names_;
  const std::vector<double> bounds_;
  mutable absl::Mutex mu_;
  std::map<Labels, Series> series_ ABSL_GUARDED_BY(mu_);
};

class Registry {
 public:
  Family* Counter(const std::string& name, const std::string& help,
                  std::vector<std::string> label_names = {});
  Family* Gauge(const std::string& name, const std::string& help,
                std::vector<std::string> label_names = {});
  Family* Histogram(const std::string& name, const std::string& help,
                    std::vector<std::string> label_names, std::vector<double> buckets);
  // A function run at every scrape, e.g. to set gauges from current state.
  void OnScrape(std::function<void()> fn);
  std::string Render() const;
  Family* Find(const std::string& name) const;
  static Registry& Default();

 private:
  Family* Add(std::unique_ptr<Family> f);
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Family>> families_ ABSL_GUARDED_BY(mu_);
  std::vector<std::function<void()>> on_scrape_ ABSL_GUARDED_BY(mu_);
};

// Latency buckets in seconds, like client-go's request latency metrics.
std::vector<double> LatencyBuckets();

}  // namespace ccm::metrics
