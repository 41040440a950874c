// Helpers of the HTML report tests: running commands, rendering a page in headless Chromium,
// and reading elements and attributes back out of the rendered DOM.
#ifndef SHARDSIM_TESTS_HTML_HTML_TEST_UTIL_H_
#define SHARDSIM_TESTS_HTML_HTML_TEST_UTIL_H_

#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_cli.h"

namespace shardsim::testing {

inline std::string Quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Where the browser tests write their reports and screenshots: html_test/ beside the shardsim
// binary (the build folder).
inline std::string OutputDir() {
  const std::filesystem::path dir =
      std::filesystem::path(SHARDSIM_BINARY).parent_path() / "html_test";
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Debian's chromium (or $SHARDSIM_CHROMIUM); empty when none is installed.
inline std::string FindChromium() {
  if (const char* env = std::getenv("SHARDSIM_CHROMIUM"); env != nullptr && *env != '\0') {
    return env;
  }
  for (const char* name : {"chromium", "chromium-browser"}) {
    const CliRun r = RunCommand(std::string("command -v ") + name + " 2>/dev/null");
    if (r.code == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return "";
}

struct Rendered {
  bool ok = false;
  std::string dom;    // the DOM after the page's scripts ran (--dump-dom)
  std::string error;  // why not ok
  double wall_s = 0;  // time the browser took, start to exit
};

// Opens file://`html_path``fragment` in headless Chromium with the flags of a sandbox-less CI
// machine and no network, saves a `width` x `height` screenshot to `screenshot` (if not empty)
// and returns the DOM.
inline Rendered RenderInChromium(const std::string& chromium, const std::string& html_path,
                                 const std::string& fragment, const std::string& screenshot,
                                 int width, int height) {
  Rendered r;
  std::string profile =
      (std::filesystem::temp_directory_path() / "shardsim-chromium-XXXXXX").string();
  if (mkdtemp(profile.data()) == nullptr) {
    r.error = "mkdtemp failed";
    return r;
  }
  const std::string url = "file://" + std::filesystem::absolute(html_path).string() + fragment;
  std::string cmd = "timeout 120 " + Quote(chromium) +
                    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                    " --disable-background-networking --disable-component-update --disable-sync"
                    " --hide-scrollbars --user-data-dir=" +
                    Quote(profile) + " --window-size=" + std::to_string(width) + "," +
                    std::to_string(height);
  if (!screenshot.empty()) cmd += " --screenshot=" + Quote(screenshot);
  cmd += " --dump-dom " + Quote(url) + " 2>" + Quote(profile + ".log");
  const auto t0 = std::chrono::steady_clock::now();
  const CliRun c = RunCommand(cmd);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.dom = c.out;
  r.ok = c.code == 0 && r.dom.find("<html") != std::string::npos;
  if (!r.ok)
    r.error = "chromium exit " + std::to_string(c.code) + ": " + ReadFile(profile + ".log");
  std::error_code ec;
  std::filesystem::remove_all(profile, ec);
  std::filesystem::remove(profile + ".log", ec);
  return r;
}

// One start tag of the DOM: its name and attributes (values unescaped).
struct Element {
  std::string tag;
  std::map<std::string, std::string> attrs;
  size_t offset = 0;   // where its start tag begins in the DOM text
  size_t content = 0;  // just after its start tag
  bool Has(const std::string& a) const { return attrs.count(a) > 0; }
  std::string Get(const std::string& a) const {
    auto it = attrs.find(a);
    return it == attrs.end() ? "" : it->second;
  }
};

inline std::string Unescape(std::string s) {
  const std::pair<const char*, const char*> kEntities[] = {{"&lt;", "<"},    {"&gt;", ">"},
                                                           {"&quot;", "\""}, {"&#39;", "'"},
                                                           {"&nbsp;", " "},  {"&amp;", "&"}};
  for (const auto& [from, to] : kEntities) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + 1)) {
      s.replace(p, std::string(from).size(), to);
    }
  }
  return s;
}

// Every start tag outside <script> and <style> elements.
inline std::vector<Element> ParseElements(const std::string& dom) {
  std::vector<Element> out;
  size_t i = 0;
  while ((i = dom.find('<', i)) != std::string::npos) {
    if (i + 1 >= dom.size() || !std::isalpha(static_cast<unsigned char>(dom[i + 1]))) {
      ++i;
      continue;
    }
    size_t name_end = i + 1;
    while (name_end < dom.size() && !std::isspace(static_cast<unsigned char>(dom[name_end])) &&
           dom[name_end] != '/' && dom[name_end] != '>') {
      ++name_end;
    }
    Element e;
    e.tag = dom.substr(i + 1, name_end - i - 1);
    e.offset = i;
    // Attributes up to the '>' that is outside quotes: name, or name="value" (a serialized DOM
    // always quotes with "). No regex: libstdc++'s recurses per character and overflows on long
    // SVG path data.
    size_t a = name_end;
    while (a < dom.size() && dom[a] != '>') {
      if (std::isspace(static_cast<unsigned char>(dom[a])) || dom[a] == '/') {
        ++a;
        continue;
      }
      const size_t name_start = a;
      while (a < dom.size() && dom[a] != '=' && dom[a] != '>' && dom[a] != '/' &&
             !std::isspace(static_cast<unsigned char>(dom[a]))) {
        ++a;
      }
      std::string value;
      if (a + 1 < dom.size() && dom[a] == '=' && dom[a + 1] == '"') {
        const size_t close = dom.find('"', a + 2);
        if (close == std::string::npos) return out;
        value = dom.substr(a + 2, close - a - 2);
        e.attrs[dom.substr(name_start, a - name_start)] = Unescape(value);
        a = close + 1;
      } else {
        e.attrs[dom.substr(name_start, a - name_start)] = "";
        if (a < dom.size() && dom[a] == '=') ++a;  // not from a serializer; move on
      }
    }
    const size_t end = a;
    if (end >= dom.size()) break;
    e.content = end + 1;
    out.push_back(e);
    i = end + 1;
    if (e.tag == "script" || e.tag == "style") {
      const size_t close = dom.find("</" + e.tag, i);
      if (close == std::string::npos) break;
      i = close;
    }
  }
  return out;
}

// The text between the end of the start tag of `e` and the next '<'.
inline std::string TextAfter(const std::string& dom, const Element& e) {
  return Unescape(dom.substr(e.content, dom.find('<', e.content) - e.content));
}

// Elements with `attr` (and, if `value` is not empty, attr == value) inside the element whose
// id is `id`, up to its matching close tag.
inline std::vector<Element> Within(const std::string& dom, const std::vector<Element>& all,
                                   const std::string& id, const std::string& attr,
                                   const std::string& value = "") {
  const Element* box = nullptr;
  for (const Element& e : all) {
    if (e.Get("id") == id) box = &e;
  }
  if (box == nullptr) return {};
  // Find the close tag matching the container's start tag.
  const std::string open = "<" + box->tag, close = "</" + box->tag + ">";
  size_t pos = box->content, end = dom.size();
  for (int depth = 1; depth > 0;) {
    const size_t o = dom.find(open, pos), c = dom.find(close, pos);
    if (c == std::string::npos) break;
    if (o != std::string::npos && o < c) {
      ++depth;
      pos = o + open.size();
    } else {
      --depth;
      pos = c + close.size();
      end = c;
    }
  }
  std::vector<Element> out;
  for (const Element& e : all) {
    if (e.offset > box->offset && e.offset < end && e.Has(attr) &&
        (value.empty() || e.Get(attr) == value)) {
      out.push_back(e);
    }
  }
  return out;
}

// The JSON data block of a report (<script type="application/json" id="shardsim-data">).
inline std::string DataBlock(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"shardsim-data\">";
  const size_t s = html.find(open);
  if (s == std::string::npos) return "";
  const size_t b = s + open.size();
  return html.substr(b, html.find("</script>", b) - b);
}

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_HTML_HTML_TEST_UTIL_H_
