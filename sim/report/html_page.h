// Building blocks of the self-contained HTML reports (html_report.h): escaping, the page skeleton
// with its stylesheet, scripts and data inline, and the attributes by which tests read figures
// back out of the rendered page.
//
// A page is static HTML (inputs, headline figures, verdict, tables: readable without scripts)
// plus a JSON block, <script type="application/json" id="shardsim-data">, from which the
// embedded scripts (sim/report/assets/) draw the charts as inline SVG. The first script of the
// page records every JavaScript error into <ul id="js-errors" data-count="N">; when drawing is
// over the body carries data-render="done" and data-render-ms (the time the charts took).
#ifndef SHARDSIM_REPORT_HTML_PAGE_H_
#define SHARDSIM_REPORT_HTML_PAGE_H_

#include <string>
#include <string_view>
#include <vector>

namespace shardsim {

// `text` with & < > " ' escaped, for element text and attribute values.
std::string HtmlEscape(std::string_view text);

// A JSON text made safe to sit inside a <script> element: every "<" becomes "\u003c" (the same
// string for a JSON parser; "<" can only occur inside JSON strings), so neither "</script" nor
// "<!--" in a name can end or swallow the element.
std::string ScriptSafeJson(std::string_view json);

// `value` written as the JSON output writes numbers (the shortest text that reads back as the
// same double), so a page's data-value equals the figure of `--json` exactly.
std::string JsonNumber(double value);

// 493914.2 -> "493,914", 12.0 -> "12", 3.14159 -> "3.142": whole numbers with thousands
// separators, fractions under 1,000 with four significant digits.
std::string GroupedNumber(double v);

// <span data-key="KEY" data-value="VALUE">TEXT</span>: a figure people read (TEXT, escaped) with
// the exact value a program checks (VALUE: a JsonNumber, "true"/"false").
std::string KeyedValue(std::string_view key, std::string_view value, std::string_view text);

struct HtmlPage {
  std::string title;
  std::string kind;                  // "simulate" or "sweep": the body's data-report
  std::string body;                  // static HTML of the report
  std::string data_json;             // what the scripts draw from
  std::vector<std::string> scripts;  // asset names run after the data, in this order
};

// The whole document: doctype, head (error recorder, stylesheet), body, data, scripts. Nothing in
// it refers to another file or to the network.
std::string RenderHtmlPage(const HtmlPage& page);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_HTML_PAGE_H_
