// One left-to-right pass over the demangled name that copies the name's own parts and skips the
// bracketed groups that are not names: template arguments ("<...>"), parameter lists ("(...)")
// and ABI tags ("[abi:cxx11]"). A space outside brackets ends a return type, which is dropped;
// the first parameter list that is not followed by "::" (a name local to the function: a lambda,
// a local class) ends the name, so what follows it (const, &, [clone .cold]) goes too.
#include "analysis/short_name.h"

#include <algorithm>

namespace heaprec::analysis {
namespace {

// The index just past the group that opens at `open` (a '<', '(', '[' or '{'), counting nested
// brackets of every kind; name.size() if it never closes.
size_t SkipGroup(std::string_view name, size_t open) {
  int depth = 0;
  for (size_t i = open; i < name.size(); ++i) {
    char c = name[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if (c == '>' || c == ')' || c == ']' || c == '}') --depth;
    if (depth == 0) return i + 1;
  }
  return name.size();
}

// The index just past the qualifiers that may follow a parameter list (" const", " volatile",
// " &", " &&") from `i`.
size_t SkipQualifiers(std::string_view name, size_t i) {
  for (;;) {
    if (name.substr(i, 6) == " const") {
      i += 6;
    } else if (name.substr(i, 9) == " volatile") {
      i += 9;
    } else if (name.substr(i, 3) == " &&") {
      i += 3;
    } else if (name.substr(i, 2) == " &") {
      i += 2;
    } else {
      return i;
    }
  }
}

// Whether a name part starts here: at the beginning, after "::", or at either half of a Rust
// qualified path ("<(anonymous namespace)::T as Trait>").
bool StartsSegment(const std::string& out, int qualified_depth) {
  return out.empty() || out.ends_with("::") ||
         (qualified_depth > 0 && (out.ends_with("<") || out.ends_with(" as ")));
}

// The symbolic operators, longest first: an operator's name is the longest of these that starts
// where it does, so that a template operator's arguments are not taken for more of its symbol
// ("operator+<char, ...>", "operator>><char, ...>").
constexpr std::string_view kOperatorSymbols[] = {
    "->*", "<<=", ">>=", "<=>", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=",
    "&&",  "||",  "++",  "--",  "+=", "-=", "*=", "/=", "%=", "^=", "&=", "|=", "+",
    "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  "<",  ">",  ","};

// Appends the operator's name that starts at `i` (just after "operator") and returns the index
// after it: a symbol (kOperatorSymbols), a word operator with its space (" new", " delete[]",
// " bool", a conversion's type up to its parameters or template arguments), or a literal
// operator's quotes and suffix.
size_t CopyOperator(std::string_view name, size_t i, std::string& out) {
  size_t start = i;
  if (name.substr(i, 2) == "\"\"") {
    // A literal operator with its suffix: operator"" _kb.
    i = std::min(name.find_first_of("(<", i), name.size());
  } else if (i < name.size() && name[i] == ' ') {
    ++i;
    while (i < name.size() && name[i] != '(' && name[i] != '<') ++i;
  } else {
    for (std::string_view symbol : kOperatorSymbols) {
      if (name.substr(i, symbol.size()) == symbol) {
        i += symbol.size();
        break;
      }
    }
  }
  out.append(name.substr(start, i - start));
  // A template operator's arguments follow, after a space when the symbol ends with '<':
  // "operator<< <char>".
  if (name.substr(i, 2) == " <") ++i;
  return i;
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `name` without the suffixes GCC gives the clones of a function when they were not demangled as
// "[clone .cold]" ("Parse.isra.0", "main.cold", "Parse.constprop.0.isra.0").
std::string_view WithoutCloneSuffixes(std::string_view name) {
  static constexpr std::string_view kCloneKinds[] = {"cold",     "isra",       "constprop", "part",
                                                     "lto_priv", "localalias", "ipa"};
  for (;;) {
    // A clone's suffix is ".KIND" or ".KIND.N", and suffixes stack: "f.isra.0.cold".
    std::string_view rest = name;
    size_t dot = rest.rfind('.');
    if (dot != std::string_view::npos && dot > 0 && IsDigits(rest.substr(dot + 1))) {
      rest = rest.substr(0, dot);
      dot = rest.rfind('.');
    }
    if (dot == std::string_view::npos || dot == 0) return name;
    std::string_view kind = rest.substr(dot + 1);
    if (std::find(std::begin(kCloneKinds), std::end(kCloneKinds), kind) == std::end(kCloneKinds)) {
      return name;
    }
    name = rest.substr(0, dot);
  }
}

}  // namespace

std::string ShortName(std::string_view name) {
  std::string out;
  // Inside a Rust qualified path "<Type as Trait>", which only starts a name: its '>' closes it,
  // its spaces are the name's.
  int qualified_depth = 0;
  size_t i = 0;
  while (i < name.size()) {
    char c = name[i];
    if (name.substr(i, 8) == "operator" && (out.empty() || out.ends_with("::"))) {
      out += "operator";
      i = CopyOperator(name, i + 8, out);
      continue;
    }
    if (c == '<' && out.empty()) {
      ++qualified_depth;  // "<alloc::vec::Vec<T> as core::clone::Clone>::clone"
      out += c;
      ++i;
      continue;
    }
    if (c == '>' && qualified_depth > 0) {
      --qualified_depth;
      out += c;
      ++i;
      continue;
    }
    if (c == '{' || (c == '(' && StartsSegment(out, qualified_depth)) ||
        (c == '[' && qualified_depth > 0 && out.ends_with("<"))) {
      // A slice type in a Rust qualified path ("<[u8]>::to_vec_in"), a lambda or closure
      // ("{lambda(int)#1}", "{{closure}}") or "(anonymous namespace)": names.
      size_t end = SkipGroup(name, i);
      out.append(name.substr(i, end - i));
      i = end;
      continue;
    }
    if (c == '<' || c == '[') {
      // Rust's turbofish ("lang_start::<()>::{closure#0}"): its "::" goes with the arguments.
      if (c == '<' && out.ends_with("::")) out.resize(out.size() - 2);
      i = SkipGroup(name, i);  // template arguments, "[abi:cxx11]", "[clone .cold]"
      continue;
    }
    if (c == '(') {
      // The parameter list. It ends the name, unless what follows it is a name local to the
      // function: "F(int)::{lambda(int)#1}::operator()(int) const" ->
      // "F::{lambda(int)#1}::operator()".
      size_t after = SkipQualifiers(name, SkipGroup(name, i));
      if (name.substr(after, 2) != "::") break;
      out += "::";
      i = after + 2;
      continue;
    }
    if (c == ' ' && qualified_depth == 0) {
      out.clear();  // what came before was a return type
      ++i;
      continue;
    }
    out += c;
    ++i;
  }
  // Rust's turbofish ("foo::<u32>") leaves "foo::".
  while (out.ends_with("::")) out.resize(out.size() - 2);
  // A clone's symbol that was not demangled whole: "Cold.cold" as "[clone .cold]" is.
  out.resize(WithoutCloneSuffixes(out).size());
  return out.empty() ? std::string(name) : out;
}

bool IsMangledName(std::string_view system_name) {
  return system_name.starts_with("_Z") || system_name.starts_with("_R");
}

}  // namespace heaprec::analysis
