#include "orchestrator/json_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "orchestrator/experiment.hpp"

namespace scalebench::orchestrator {

using nlohmann::json;

// Text from the file as it may appear inside a one-line message: printable ASCII, anything else
// escaped, at most `limit` characters.
std::string printable(std::string_view text, std::size_t limit) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

// One step of a field path: `.key` when the key is a plain word, else `["key"]` escaped.
std::string path_step(std::string_view parent, std::string_view key) {
  const bool plain = !key.empty() && key.size() <= 40 &&
                     key.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_-") == std::string_view::npos;
  if (plain) return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
  return fmt::format("{}[\"{}\"]", parent, printable(key));
}

// A path for a message: long ones (64 levels) keep their start and end.
std::string shown_path(const std::string& path) {
  if (path.empty()) return "(top level)";
  if (path.size() <= 160) return path;
  return path.substr(0, 60) + "..." + path.substr(path.size() - 97);
}

namespace {

std::string position_of(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n')
      ++line, column = 1;
    else
      ++column;
  }
  return fmt::format("{}:{}", line, column);
}

// Where the brackets first nest deeper than kMaxJsonDepth (the text up to there is valid JSON,
// so brackets inside strings are the only ones to skip).
std::size_t depth_exceeded_at(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return text.size();
}

// Builds the document through nlohmann's SAX interface, whose parser is iterative: the depth
// limit is enforced before a deeper level exists (the DOM's own destructor and dump recurse),
// a repeated key is refused where nlohmann would keep the last one silently, and every error
// names the path being read.
class DocumentBuilder final : public nlohmann::json_sax<json> {
 public:
  DocumentBuilder(const std::string& text, const std::filesystem::path& file)
      : text_(text), file_(file) {}

  json take() { return std::move(root_); }

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool value) override { return put(json(value)); }
  bool number_integer(number_integer_t value) override { return put(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return put(json(value)); }
  // nlohmann reports a non-finite double (1e400) through parse_error, never here.
  bool number_float(number_float_t value, const string_t&) override { return put(json(value)); }
  bool string(string_t& value) override { return put(json(std::move(value))); }
  bool binary(binary_t& value) override { return put(json::binary(std::move(value))); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& key) override {
    Frame& top = frames_.back();
    if (top.value->contains(key))
      throw ExperimentError(
          fmt::format("{}: field \"{}\": expected each key once in an object, got \"{}\" twice",
                      file_.string(), shown_path(path_step(top.path, key)), printable(key)));
    top.key = std::move(key);
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::json::exception& error) override {
    if (error.id == 406) {  // number overflow: a literal outside the range of a double
      const std::size_t start = position > last_token.size() ? position - last_token.size() : 0;
      throw ExperimentError(
          fmt::format("{}:{}: field \"{}\": expected a number within the range of a double, got {}",
                      file_.string(), position_of(text_, start), shown_path(next_path()),
                      printable(last_token)));
    }
    std::string what = error.what();
    if (const auto at = what.find("] "); at != std::string::npos) what = what.substr(at + 2);
    throw ExperimentError(fmt::format("{}:{}: not valid JSON: {}", file_.string(),
                                      position_of(text_, position == 0 ? 0 : position - 1),
                                      printable(what, 200)));
  }

 private:
  struct Frame {
    json* value;
    std::string path;
    std::string key;  // the key whose value comes next, in an object
  };

  // The path of the value about to be read.
  std::string next_path() const {
    if (frames_.empty()) return "";
    const Frame& top = frames_.back();
    if (top.value->is_object()) return path_step(top.path, top.key);
    return fmt::format("{}[{}]", top.path, top.value->size());
  }
  json* insert(json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& top = *frames_.back().value;
    if (top.is_object()) return &(top[frames_.back().key] = std::move(value));
    top.push_back(std::move(value));
    return &top.back();
  }
  bool put(json&& value) {
    insert(std::move(value));
    return true;
  }
  bool open(json&& container) {
    auto path = next_path();
    if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth))
      throw ExperimentError(fmt::format(
          "{}:{}: field \"{}\": expected at most {} levels of nested arrays and objects",
          file_.string(), position_of(text_, depth_exceeded_at(text_)), shown_path(path),
          kMaxJsonDepth));
    // A child is complete before its parent grows again, so the pointer stays valid.
    frames_.push_back({insert(std::move(container)), std::move(path), {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  const std::string& text_;
  const std::filesystem::path& file_;
  json root_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_document(const std::string& text, const std::filesystem::path& path) {
  DocumentBuilder builder(text, path);
  json::sax_parse(text, &builder);
  return builder.take();
}

}  // namespace scalebench::orchestrator
