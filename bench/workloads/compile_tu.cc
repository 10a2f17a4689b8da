// Input for the compiler benchmark, never built by CMake: `g++ -std=c++20 -O2 -c compile_tu.cc`.
// A translation unit of the kind that makes cc1plus allocate: most of the standard library's
// headers, and BENCH_TYPES distinct record types each instantiating containers, algorithms,
// std::function, std::variant, std::regex and friends. -DBENCH_TYPES=N scales the work (the default
// takes several seconds at -O2; the reduced input for slow tools uses a small N).
#include <algorithm>
#include <any>
#include <array>
#include <atomic>
#include <bitset>
#include <chrono>
#include <complex>
#include <deque>
#include <filesystem>
#include <forward_list>
#include <fstream>
#include <functional>
#include <future>
#include <iomanip>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <queue>
#include <random>
#include <ranges>
#include <regex>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <stack>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#ifndef BENCH_TYPES
#define BENCH_TYPES 4
#endif

namespace bench {

template <int N>
struct Record {
  std::string name;
  std::vector<int> values;
  std::map<std::string, double> attributes;
  std::optional<std::array<long, N % 7 + 1>> extra;
  std::variant<int, double, std::string, std::vector<char>> tag;
  auto operator<=>(const Record&) const = default;
};

template <int N>
std::string Describe(const Record<N>& r) {
  std::ostringstream out;
  out << r.name << '#' << N << ':' << std::setw(6) << r.values.size();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<char>>) {
          out << v.size();
        } else {
          out << v;
        }
      },
      r.tag);
  for (const auto& [k, v] : r.attributes) out << ' ' << k << '=' << std::fixed << v;
  return out.str();
}

// One regex instantiation for the whole TU (per-type regexes made each type cost seconds).
std::size_t Matches(const std::string& text, int n) {
  std::regex pattern("([a-z]+)" + std::to_string(n) + "(\\d*)");
  std::smatch match;
  return std::regex_search(text, match, pattern) ? match.size() : 0;
}

template <int N>
std::size_t Work(std::size_t seed) {
  std::mt19937_64 rng(seed + N);
  std::vector<Record<N>> records(64);
  for (auto& r : records) {
    r.name = std::to_string(rng());
    r.values.resize(rng() % 32);
    std::iota(r.values.begin(), r.values.end(), N);
    r.attributes["k" + std::to_string(N)] = std::generate_canonical<double, 53>(rng);
    r.tag = std::string(N % 5 + 1, 'x');
  }
  std::sort(records.begin(), records.end());
  std::stable_sort(records.begin(), records.end(),
                   [](const auto& a, const auto& b) { return a.values.size() < b.values.size(); });
  std::unordered_map<std::string, Record<N>> by_name;
  std::set<std::pair<std::size_t, std::string>> ordered;
  std::deque<std::function<std::size_t(const Record<N>&)>> steps;
  steps.push_back([](const Record<N>& r) { return r.values.size(); });
  steps.push_back([](const Record<N>& r) { return std::hash<std::string>{}(r.name); });
  for (const auto& r : records) {
    by_name.emplace(r.name, r);
    for (const auto& step : steps) ordered.emplace(step(r), Describe(r));
  }
  auto evens = records |
               std::views::filter([](const auto& r) { return r.values.size() % 2 == 0; }) |
               std::views::transform([](const auto& r) { return r.name.size(); });
  std::size_t total = std::accumulate(evens.begin(), evens.end(), std::size_t{0});
  for (const auto& [count, text] : ordered) total += Matches(text, N) + count;
  std::priority_queue<long, std::vector<long>, std::greater<>> heap;
  std::list<std::complex<double>> points;
  for (const auto& r : records) {
    heap.push(static_cast<long>(r.values.size()));
    points.emplace_back(static_cast<double>(r.values.size()), N);
  }
  std::any boxed = std::make_shared<std::vector<Record<N>>>(records);
  total += std::any_cast<std::shared_ptr<std::vector<Record<N>>>>(boxed)->size();
  std::unordered_set<long> seen(records.size());
  for (const auto& p : points) seen.insert(std::lround(std::abs(p)));
  return total + heap.top() + seen.size() + by_name.size();
}

template <std::size_t... I>
std::size_t WorkAll(std::size_t seed, std::index_sequence<I...>) {
  return (std::size_t{0} + ... + Work<static_cast<int>(I)>(seed));
}

}  // namespace bench

std::size_t bench_entry(std::size_t seed) {
  return bench::WorkAll(seed, std::make_index_sequence<BENCH_TYPES>{});
}
