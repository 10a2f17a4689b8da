// The compiler benchmark's reduced input, for tools too slow for compile_tu.cc (Valgrind massif):
// a few standard headers and one small template instantiated a few times.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

template <int N>
std::size_t Count(const std::vector<std::string>& words) {
  std::map<std::string, int> counts;
  for (const auto& w : words) counts[w + std::to_string(N)] += N;
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted.size();
}

std::size_t bench_small(const std::vector<std::string>& words) {
  return Count<1>(words) + Count<2>(words) + Count<3>(words) + Count<4>(words);
}
