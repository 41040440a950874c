#include "sim/report/html_page.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "sim/base/units.h"
#include "sim/report/html_assets.h"

namespace shardsim {

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ScriptSafeJson(std::string_view json) {
  // Every '<' (only ever inside a JSON string) as \u003c: neither "</script" nor "<!--" can then
  // end or swallow the data block (HTML's script data states), and the JSON means the same.
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string GroupedNumber(double v) {
  if (std::fabs(v) < 1000.0 && v != std::floor(v)) return FormatSig(v, 4);
  std::string digits = std::to_string(static_cast<int64_t>(std::llround(std::fabs(v))));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string JsonNumber(double value) { return nlohmann::json(value).dump(); }

std::string KeyedValue(std::string_view key, std::string_view value, std::string_view text) {
  return "<span data-key=\"" + HtmlEscape(key) + "\" data-value=\"" + HtmlEscape(value) + "\">" +
         HtmlEscape(text) + "</span>";
}

std::string RenderHtmlPage(const HtmlPage& page) {
  std::string out;
  out.reserve(page.body.size() + page.data_json.size() + size_t{96} * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"shardsim\">\n";
  out += "<title>" + HtmlEscape(page.title) + "</title>\n";
  // First, so that it sees the errors of everything after it.
  out += "<script>\n" + std::string(HtmlAsset("errors.js")) + "</script>\n";
  out += "<style>\n" + std::string(HtmlAsset("report.css")) + "</style>\n</head>\n";
  out += "<body data-report=\"" + HtmlEscape(page.kind) + "\" data-render=\"pending\">\n";
  out += "<ul id=\"js-errors\" class=\"js-errors\" data-count=\"0\" hidden></ul>\n";
  out +=
      "<noscript><p class=\"noscript\">The charts of this report are drawn by its embedded "
      "scripts; the figures and tables below are complete without them.</p></noscript>\n";
  out += page.body;
  out += "<script type=\"application/json\" id=\"shardsim-data\">" +
         ScriptSafeJson(page.data_json) + "</script>\n";
  for (const std::string& name : page.scripts) {
    out += "<script>\n" + std::string(HtmlAsset(name)) + "</script>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace shardsim
