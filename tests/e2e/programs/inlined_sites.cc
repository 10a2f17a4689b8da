// A C++ program built as users build theirs (-O2 -g), whose allocations go through the standard
// library's templates by way of every shape of C++ name: strings built with operator+ in an
// inlined helper, vectors grown by push_back (_M_realloc_insert), std::make_unique, std::map and
// std::unordered_map inserts, std::function holding lambdas, a lambda called directly, a function
// template returning std::string, a conversion operator to std::string, and policy-based templates
// in an anonymous namespace. Most names pprof sees start with a return type
// ("void std::vector<...>::_M_realloc_insert<...>", "std::__cxx11::basic_string<...>
// std::operator+<...>"). user_sites_test.cc checks that `heaprec report` and `pprof -top` name
// the same functions as the sites: the functions below that call the library, each.
//
//   inlined_sites    (no arguments; prints one line)
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace shop {

// Inlined into AddLabels: its strings are its own, built by std::operator+.
inline std::string Label(const std::string& name, int id) {
  return name + "#" + std::to_string(id) + std::string(100, '.');
}

struct Catalog {
  std::vector<std::string> labels;
  std::vector<int> ids;
  std::map<int, std::string> by_id;
  std::unordered_map<std::string, int> by_name;
  std::vector<std::unique_ptr<char[]>> blobs;
  std::vector<std::function<long(long)>> hooks;

  __attribute__((noinline)) void AddLabels(int n) {
    for (int i = 0; i < n; ++i) labels.push_back(Label("item", i));
  }
  __attribute__((noinline)) void AddIds(int n) {
    for (int i = 0; i < n; ++i) ids.push_back(i);
  }
  __attribute__((noinline)) void Index(int n) {
    for (int i = 0; i < n; ++i) by_id.emplace(i, std::string(64, 'm'));
  }
  __attribute__((noinline)) void Name(int n) {
    for (int i = 0; i < n; ++i) {
      by_name[std::to_string(i * 1000003) + "-a-name-long-enough"] = i;
    }
  }
  __attribute__((noinline)) void Blobs(int n) {
    for (int i = 0; i < n; ++i) blobs.push_back(std::make_unique<char[]>(4096));
  }
  // Each std::function holds its lambda on the heap: the lambda's captures are too big for it.
  __attribute__((noinline)) void Hooks(int n) {
    for (int i = 0; i < n; ++i) {
      std::string text(200, 'h');
      long a = i, b = 2 * i, c = 3 * i;
      hooks.emplace_back(
          [text, a, b, c](long x) { return static_cast<long>(text.size()) + a + b + c + x; });
    }
  }
};

// A function template: its name starts with its return type, std::__cxx11::basic_string<...>.
template <typename T>
__attribute__((noinline)) std::string Render(const T& value) {
  return std::to_string(value) + std::string(300, 'r');
}

// A conversion operator to a std type: "shop::Sku::operator std::__cxx11::basic_string<...>".
struct Sku {
  int code;
  __attribute__((noinline)) operator std::string() const {
    return "sku-" + std::string(400, 's') + std::to_string(code);
  }
};

}  // namespace shop

namespace {

// Policy-based templates, as template-heavy libraries write them.
template <typename T>
struct HeapStorage {
  static T* Make(size_t n) { return new T[n](); }
};

template <typename T, template <typename> class Storage>
class Pool {
 public:
  __attribute__((noinline)) void Grow(size_t n) {
    chunks_.push_back(std::unique_ptr<T[]>(Storage<T>::Make(n)));  // Make is inlined here
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
};

}  // namespace

// Held until exit on purpose: the profile is of the live heap at exit.
std::vector<std::string>* g_rendered = new std::vector<std::string>;
shop::Catalog* g_catalog = new shop::Catalog;
Pool<double, HeapStorage>* g_pool = new Pool<double, HeapStorage>;

int main() {
  g_catalog->AddLabels(20000);
  g_catalog->AddIds(300000);
  g_catalog->Index(10000);
  g_catalog->Name(10000);
  g_catalog->Blobs(500);
  g_catalog->Hooks(5000);
  for (int i = 0; i < 5000; ++i) g_rendered->push_back(shop::Render(i));
  for (int i = 0; i < 3000; ++i) g_rendered->push_back(shop::Sku{i});
  for (int i = 0; i < 200; ++i) g_pool->Grow(1024);
  auto repeat = [](int n) {
    for (int i = 0; i < n; ++i) g_rendered->push_back(std::string(500, 'l'));
  };
  repeat(2000);
  std::printf("labels %zu, rendered %zu\n", g_catalog->labels.size(), g_rendered->size());
  return 0;
}
