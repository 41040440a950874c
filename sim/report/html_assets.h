// The stylesheet and scripts of the HTML reports. They are written as ordinary files under
// sim/report/assets/ and compiled into the library as strings at build time
// (sim/report/assets/embed.cmake), so every report carries them inline.
#ifndef SHARDSIM_REPORT_HTML_ASSETS_H_
#define SHARDSIM_REPORT_HTML_ASSETS_H_

#include <string_view>

namespace shardsim {

// The text of sim/report/assets/`name` ("report.css", "charts.js", ...), or empty if there is
// no such asset.
std::string_view HtmlAsset(std::string_view name);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_HTML_ASSETS_H_
