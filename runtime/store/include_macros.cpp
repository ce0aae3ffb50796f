// SPDX-License-Identifier: Apache-2.0
#include "store/include_macros.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace prewarm::store {
namespace {

constexpr std::size_t k_max_results = 64;
constexpr int k_max_depth = 64;

bool
ident_start(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

bool
ident_char(char c)
{
  return ident_start(c) || (c >= '0' && c <= '9');
}

bool
space(char c)
{
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n';
}

struct Token
{
  enum Kind { ident, number, literal, punct } kind = punct;
  std::string text;
  bool space_before = false;
  bool uncertain = false; // an identifier the compiler may predefine, or text made from one
};
using Tokens = std::vector<Token>;
using Alternatives = std::vector<Tokens>;

// Preprocessing tokens of one logical line (comments already gone); false
// on an unterminated literal.
bool
tokenize(std::string_view t, Tokens& out)
{
  bool spaced = false;
  for (std::size_t i = 0; i < t.size();) {
    const char c = t[i];
    if (space(c)) {
      spaced = true;
      ++i;
      continue;
    }
    Token tok;
    tok.space_before = spaced;
    spaced = false;
    const auto start = i;
    if (c == '"' || c == '\'') {
      ++i;
      while (i < t.size() && t[i] != c) {
        i += t[i] == '\\' ? 2 : 1;
      }
      if (i >= t.size()) {
        return false;
      }
      ++i;
      tok.kind = Token::literal;
    } else if (ident_start(c)) {
      while (i < t.size() && ident_char(t[i])) {
        ++i;
      }
      tok.kind = Token::ident;
    } else if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < t.size() && t[i + 1] >= '0' && t[i + 1] <= '9')) {
      while (i < t.size() && (ident_char(t[i]) || t[i] == '.' ||
                              ((t[i] == '+' || t[i] == '-') && (t[i - 1] == 'e' || t[i - 1] == 'E' || t[i - 1] == 'p' || t[i - 1] == 'P')))) {
        ++i;
      }
      tok.kind = Token::number;
    } else {
      i += t.compare(i, 2, "##") == 0 ? 2 : 1;
      tok.kind = Token::punct;
    }
    tok.text = std::string(t.substr(start, i - start));
    out.push_back(std::move(tok));
  }
  return true;
}

// Names a compiler may define before the first line: the program's own
// definitions cannot show them, so an expansion that meets one is unsure.
bool
may_be_predefined(std::string_view name)
{
  static const std::set<std::string_view> k_system{"linux", "unix", "i386", "i486", "i586", "i686", "sun", "sparc",
                                                   "mips", "vax", "arm", "x86_64", "amd64", "ppc", "powerpc"};
  const bool lowercase = name.find_first_of("abcdefghijklmnopqrstuvwxyz") != std::string_view::npos;
  return name.starts_with('_') || !lowercase || name.starts_with("cl_") || k_system.contains(name);
}

std::string
stringify(const Tokens& tokens)
{
  std::string out = "\"";
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0 && tokens[i].space_before) {
      out += ' ';
    }
    for (const char c : tokens[i].text) {
      if (tokens[i].kind == Token::literal && (c == '"' || c == '\\')) {
        out += '\\';
      }
      out += c;
    }
  }
  return out + "\"";
}

class Expander
{
public:
  explicit Expander(std::map<std::string, std::vector<const MacroDefinition*>> table) : m_table(std::move(table)) {}

  const std::string& unsure() const { return m_unsure; }

  Alternatives expand(const Tokens& in, const std::set<std::string>& hidden, int depth)
  {
    return expand_from(in, 0, hidden, depth);
  }

private:
  void set_unsure(std::string why)
  {
    if (m_unsure.empty()) {
      m_unsure = std::move(why);
    }
  }

  // Every (a + b) of a in `head`, b in `tail`.
  Alternatives product(const Alternatives& head, const Alternatives& tail)
  {
    Alternatives out;
    for (const auto& a : head) {
      for (const auto& b : tail) {
        if (out.size() >= k_max_results) {
          set_unsure(fmt::format("a computed #include with more than {} expansions", k_max_results));
          return out;
        }
        Tokens joined = a;
        joined.insert(joined.end(), b.begin(), b.end());
        out.push_back(std::move(joined));
      }
    }
    return out;
  }

  Alternatives expand_from(const Tokens& in, std::size_t i, const std::set<std::string>& hidden, int depth)
  {
    if (!m_unsure.empty()) {
      return {};
    }
    if (depth > k_max_depth) {
      set_unsure("a computed #include nests its macros too deep");
      return {};
    }
    if (i >= in.size()) {
      return {Tokens{}};
    }
    const Token& t = in[i];
    const auto found = t.kind == Token::ident && !hidden.contains(t.text) ? m_table.find(t.text) : m_table.end();
    if (found == m_table.end()) {
      Token kept = t;
      // Whether it stands for itself is unknown: fatal only in a header name.
      kept.uncertain = kept.uncertain || (t.kind == Token::ident && !hidden.contains(t.text) && may_be_predefined(t.text));
      return product({Tokens{kept}}, expand_from(in, i + 1, hidden, depth));
    }
    Alternatives out;
    auto inner_hidden = hidden;
    inner_hidden.insert(t.text);
    for (const MacroDefinition* def : found->second) {
      Alternatives here;
      std::size_t next = i + 1;
      const bool expands = def != nullptr && (!def->function_like || (next < in.size() && in[next].text == "("));
      if (!expands) {
        here = {Tokens{t}}; // undefined here, or a function-like name not called
      } else if (!def->function_like) {
        here = expand(body_of(*def), inner_hidden, depth + 1);
      } else {
        std::vector<Tokens> args(1);
        int level = 0;
        for (++next; next < in.size(); ++next) {
          const auto& a = in[next];
          if (a.text == "(") {
            ++level;
          } else if (a.text == ")" && level-- == 0) {
            break;
          } else if (a.text == "," && level == 0) {
            args.emplace_back();
            continue;
          }
          args.back().push_back(a);
        }
        if (next >= in.size()) {
          continue; // no closing parenthesis: a compile error
        }
        if (args.size() == 1 && args[0].empty() && def->params.empty()) {
          args.clear();
        }
        if (args.size() != def->params.size()) {
          continue; // a compile error
        }
        for (const auto& substituted : substitute(*def, args, hidden, depth)) {
          const auto expanded = expand(substituted, inner_hidden, depth + 1);
          here.insert(here.end(), expanded.begin(), expanded.end());
        }
        ++next;
      }
      if (!m_unsure.empty()) {
        return {};
      }
      // A function-like name at the end of an expansion, completed by the
      // parenthesis that follows it: rescanning this reading does not model.
      for (const auto& alt : here) {
        if (expands && !alt.empty() && alt.back().kind == Token::ident && next < in.size() && in[next].text == "(" &&
            m_table.contains(alt.back().text)) {
          set_unsure("a computed #include whose macro is completed by what follows it");
          return {};
        }
      }
      const auto rest = product(here, expand_from(in, next, hidden, depth));
      out.insert(out.end(), rest.begin(), rest.end());
    }
    if (out.size() > k_max_results) {
      set_unsure(fmt::format("a computed #include with more than {} expansions", k_max_results));
    }
    return out;
  }

  Tokens body_of(const MacroDefinition& def)
  {
    Tokens body;
    if (!tokenize(def.body, body)) {
      set_unsure(fmt::format("the definition of {} does not lex", def.name));
    }
    return body;
  }

  // The body with each parameter replaced: `#p` by the argument as written,
  // stringified; `p` by each expansion of the argument.
  Alternatives substitute(const MacroDefinition& def, const std::vector<Tokens>& args, const std::set<std::string>& hidden,
                          int depth)
  {
    if (def.variadic) {
      set_unsure(fmt::format("a computed #include through {}, a variadic macro", def.name));
      return {};
    }
    const auto body = body_of(def);
    const auto param = [&](const Token& tok) -> int {
      for (std::size_t p = 0; p < def.params.size(); ++p) {
        if (tok.kind == Token::ident && tok.text == def.params[p]) {
          return static_cast<int>(p);
        }
      }
      return -1;
    };
    Alternatives out{Tokens{}};
    for (std::size_t b = 0; b < body.size(); ++b) {
      if (body[b].text == "##") {
        set_unsure(fmt::format("a computed #include through {}, which pastes tokens (##)", def.name));
        return {};
      }
      if (body[b].text == "#" && b + 1 < body.size() && param(body[b + 1]) >= 0) {
        const auto& arg = args[static_cast<std::size_t>(param(body[b + 1]))];
        Token str{Token::literal, stringify(arg), body[b].space_before,
                  std::any_of(arg.begin(), arg.end(), [](const Token& a) { return a.uncertain; })};
        out = product(out, {Tokens{str}});
        ++b;
      } else if (const int p = param(body[b]); p >= 0) {
        auto expanded = expand(args[static_cast<std::size_t>(p)], hidden, depth + 1);
        for (auto& alt : expanded) {
          if (!alt.empty()) {
            alt.front().space_before = body[b].space_before;
          }
        }
        out = product(out, expanded);
      } else {
        out = product(out, {Tokens{body[b]}});
      }
    }
    return out;
  }

  std::map<std::string, std::vector<const MacroDefinition*>> m_table; // null: undefined
  std::string m_unsure;
};

} // namespace

std::optional<MacroDefinition>
parse_macro_line(std::string_view rest, bool undef)
{
  std::size_t i = 0;
  while (i < rest.size() && space(rest[i])) {
    ++i;
  }
  const auto start = i;
  while (i < rest.size() && ident_char(rest[i])) {
    ++i;
  }
  if (i == start || !ident_start(rest[start])) {
    return std::nullopt;
  }
  MacroDefinition def;
  def.name = std::string(rest.substr(start, i - start));
  def.undef = undef;
  if (undef) {
    return def;
  }
  if (i < rest.size() && rest[i] == '(') {
    def.function_like = true;
    const auto close = rest.find(')', i);
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    std::string param;
    for (const char c : rest.substr(i + 1, close - i - 1)) {
      if (c == ',') {
        def.params.push_back(param);
        param.clear();
      } else if (!space(c)) {
        param += c;
      }
    }
    if (!param.empty() || !def.params.empty()) {
      def.params.push_back(param);
    }
    if (!def.params.empty() && def.params.back().ends_with("...")) {
      def.variadic = true;
    }
    i = close + 1;
  }
  def.body = std::string(rest.substr(i));
  return def;
}

std::vector<MacroDefinition>
option_macros(const std::vector<std::string>& words)
{
  std::vector<MacroDefinition> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (!w.starts_with("-D") && !w.starts_with("-U")) {
      continue;
    }
    const bool undef = w.starts_with("-U");
    std::string text = w.size() > 2 ? std::string(w.substr(2)) : (i + 1 < words.size() ? words[++i] : std::string{});
    // -D NAME=VALUE is "#define NAME VALUE"; -D NAME is "#define NAME 1".
    if (!undef) {
      const auto eq = text.find('=');
      text = eq == std::string::npos ? text + " 1" : text.substr(0, eq) + " " + text.substr(eq + 1);
    }
    if (auto def = parse_macro_line(text, undef)) {
      out.push_back(std::move(*def));
    }
  }
  return out;
}

ExpandedNames
expand_include_operand(std::string_view operand, const std::vector<MacroDefinition>& option_definitions,
                       const std::vector<MacroDefinition>& text_definitions)
{
  ExpandedNames out;
  std::map<std::string, std::vector<const MacroDefinition*>> table;
  std::set<std::string> may_be_undefined;
  for (const auto* list : {&option_definitions, &text_definitions}) {
    for (const auto& def : *list) {
      if (def.undef || list == &text_definitions) {
        may_be_undefined.insert(def.name); // a text's definition may come after the include
      }
      auto& alternatives = table[def.name];
      const bool known = std::any_of(alternatives.begin(), alternatives.end(), [&](const MacroDefinition* other) {
        return other->function_like == def.function_like && other->params == def.params && other->body == def.body;
      });
      if (!def.undef && !known) {
        alternatives.push_back(&def);
      }
    }
  }
  for (auto& [name, alternatives] : table) {
    if (may_be_undefined.contains(name)) {
      alternatives.push_back(nullptr);
    }
  }
  Tokens tokens;
  if (!tokenize(operand, tokens)) {
    out.unsure = "a computed #include that does not lex";
    return out;
  }
  Expander expander(std::move(table));
  const auto alternatives = expander.expand(tokens, {}, 0);
  if (!expander.unsure().empty()) {
    out.unsure = expander.unsure();
    return out;
  }
  const auto uncertain = [](const Token& a) { return a.uncertain; };
  for (const auto& alt : alternatives) {
    // Whether a name the compiler may predefine could make this a header
    // name: it stands first, or inside a <...> or a literal, or after a
    // literal (it may expand to nothing). A plain first token that stands
    // for itself makes it no header name whatever follows.
    const bool literal_first = !alt.empty() && alt.front().kind == Token::literal && alt.front().text.front() == '"';
    const bool could_be_header_name =
      !alt.empty() && (alt.front().uncertain || alt.front().text == "<" ||
                       (literal_first && std::all_of(alt.begin() + 1, alt.end(), uncertain)));
    if (could_be_header_name && std::any_of(alt.begin(), alt.end(), uncertain)) {
      out.unsure = "a computed #include through a name the compiler may predefine (a leading underscore, no lowercase, "
                   "cl_..., linux...)";
      return out;
    }
    if (alt.size() == 1 && alt[0].kind == Token::literal && alt[0].text.size() > 2 && alt[0].text.front() == '"') {
      const auto name = alt[0].text.substr(1, alt[0].text.size() - 2);
      if (name.find('\\') != std::string::npos) {
        out.unsure = "a computed #include names a file with a backslash";
        return out;
      }
      out.names.push_back(name);
    } else if (alt.size() > 2 && alt.front().text == "<" && alt.back().text == ">") {
      std::string name;
      for (std::size_t i = 1; i + 1 < alt.size(); ++i) {
        name += (i > 1 && alt[i].space_before ? " " : "") + alt[i].text;
      }
      out.names.push_back(name);
    }
    // Anything else is no header name: the compiler stops there.
  }
  // No header name at all: a compile error where the include is live, and
  // nothing where it is not (a branch for another platform).
  return out;
}

} // namespace prewarm::store
