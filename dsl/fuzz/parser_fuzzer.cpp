// libFuzzer target: the DSL's lexer and parser on arbitrary bytes. Any input must either parse
// or raise a dsl_error whose rendering works; anything else (a crash, a sanitizer report, another
// exception, a hang) is a bug. Evaluation is not fuzzed: it reads files named by the input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "language/parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  try {
    const kronex::dsl::program p = kronex::dsl::parse(source);
    std::size_t total = 0;
    for (const auto& s : p.statements) total += kronex::dsl::source_text(source, *s.value).size();
    if (total > 2 * source.size() + 1) __builtin_trap();  // a label can only shrink the text
  } catch (const kronex::dsl::dsl_error& e) {
    const std::string shown = e.render(source, "fuzz");
    if (shown.empty()) __builtin_trap();
  }
  return 0;
}
