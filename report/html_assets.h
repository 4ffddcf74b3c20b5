#pragma once
// The HTML report's stylesheet and the script that draws its charts (html.cpp writes both
// inline, so report.html is one file).

namespace pgslow::report {

extern const char* const kHtmlStyle;
// Draws the charts from the embedded data, then marks the page as rendered (the headless
// browser test reads data-rendered, data-bars and data-lines).
extern const char* const kHtmlScript;

}  // namespace pgslow::report
