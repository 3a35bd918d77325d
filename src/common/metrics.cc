#include "common/metrics.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ccm::metrics {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.9g", v);
}

std::string LabelText(const std::vector<std::string>& names, const Labels& values,
                      const std::string& extra = "") {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i)
    absl::StrAppend(&out, out.empty() ? "" : ",", names[i], "=\"", Escape(values[i]), "\"");
  if (!extra.empty()) absl::StrAppend(&out, out.empty() ? "" : ",", extra);
  return out.empty() ? "" : absl::StrCat("{", out, "}");
}

}  // namespace

Family::Family(std::string name, std::string help, Type type, std::vector<std::string> label_names,
               std::vector<double> buckets)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      label_names_(std::move(label_names)),
      bounds_(std::move(buckets)) {}

Family::Series& Family::Get(const Labels& labels) {
  auto [it, inserted] = series_.try_emplace(labels);
  if (inserted && type_ == Type::kHistogram) it->second.buckets.assign(bounds_.size(), 0);
  return it->second;
}

void Family::Add(const Labels& labels, double v) {
  if (type_ == Type::kCounter && v < 0) return;
  absl::MutexLock lock(&mu_);
  Get(labels).value += v;
}

void Family::Set(const Labels& labels, double v) {
  absl::MutexLock lock(&mu_);
  Get(labels).value = v;
}

void Family::Observe(const Labels& labels, double v) {
  absl::MutexLock lock(&mu_);
  Series& s = Get(labels);
  s.value += v;
  ++s.count;
  for (size_t i = 0; i < bounds_.size(); ++i)
    if (v <= bounds_[i]) ++s.buckets[i];
}

double Family::Value(const Labels& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.value;
}

uint64_t Family::Count(const Labels& labels) const {
  absl::MutexLock lock(&mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

void Family::Render(std::string* out) const {
  static const char* kTypes[] = {"counter", "gauge", "histogram"};
  absl::StrAppend(out, "# HELP ", name_, " ", help_, "\n# TYPE ", name_, " ",
                  kTypes[static_cast<int>(type_)], "\n");
  absl::MutexLock lock(&mu_);
  if (series_.empty() && label_names_.empty() && type_ != Type::kHistogram) {
    absl::StrAppend(out, name_, " 0\n");
    return;
  }
  for (const auto& [labels, s] : series_) {
    if (type_ != Type::kHistogram) {
      absl::StrAppend(out, name_, LabelText(label_names_, labels), " ", Number(s.value), "\n");
      continue;
    }
    for (size_t i = 0; i < bounds_.size(); ++i) {
      absl::StrAppend(
          out, name_, "_bucket",
          LabelText(label_names_, labels, absl::StrCat("le=\"", Number(bounds_[i]), "\"")), " ",
          s.buckets[i], "\n");
    }
    absl::StrAppend(out, name_, "_bucket", LabelText(label_names_, labels, "le=\"+Inf\""), " ",
                    s.count, "\n");
    absl::StrAppend(out, name_, "_sum", LabelText(label_names_, labels), " ", Number(s.value),
                    "\n");
    absl::StrAppend(out, name_, "_count", LabelText(label_names_, labels), " ", s.count, "\n");
  }
}

Family* Registry::Add(std::unique_ptr<Family> f) {
  absl::MutexLock lock(&mu_);
  for (auto& existing : families_)
    if (existing->name() == f->name()) return existing.get();
  families_.push_back(std::move(f));
  return families_.back().get();
}

Family* Registry::Counter(const std::string& name, const std::string& help,
                          std::vector<std::string> label_names) {
  return Add(std::make_unique<Family>(name, help, Family::Type::kCounter, std::move(label_names)));
}

Family* Registry::Gauge(const std::string& name, const std::string& help,
                        std::vector<std::string> label_names) {
  return Add(std::make_unique<Family>(name, help, Family::Type::kGauge, std::move(label_names)));
}

Family* Registry::Histogram(const std::string& name, const std::string& help,
                            std::vector<std::string> label_names, std::vector<double> buckets) {
  return Add(std::make_unique<Family>(name, help, Family::Type::kHistogram, std::move(label_names),
                                      std::move(buckets)));
}

void Registry::OnScrape(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  on_scrape_.push_back(std::move(fn));
}

Family* Registry::Find(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  for (auto& f : families_)
    if (f->name() == name) return f.get();
  return nullptr;
}

std::string Registry::Render() const {
  std::vector<std::function<void()>> hooks;
  {
    absl::MutexLock lock(&mu_);
    hooks = on_scrape_;
  }
  for (auto& h : hooks) h();
  std::string out;
  absl::MutexLock lock(&mu_);
  for (const auto& f : families_) f->Render(&out);
  return out;
}

Registry& Registry::Default() {
  static Registry* r = new Registry();
  return *r;
}

std::vector<double> LatencyBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

}  // namespace ccm::metrics
