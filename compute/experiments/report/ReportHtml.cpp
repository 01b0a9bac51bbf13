#include "compute/experiments/report/ReportHtml.hpp"

#include "models/tokenizer/Utf8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace inferscope::compute::experiments {

namespace {

constexpr const char* kJsonStart = "<script type=\"application/json\" id=\"inferscope-report\">";
constexpr const char* kJsonEnd = "</script>";

// Colour-blind-safe colours (Okabe and Ito), each with its own dash pattern and marker, so a
// series is told apart in grey print too.
struct SeriesStyle {
    const char* colour;
    const char* dash; // stroke-dasharray; "" for a solid line
    const char* marker;
};
constexpr SeriesStyle kStyles[] = {
    {"#0072B2", "", "circle"},      {"#D55E00", "8 4", "square"},
    {"#009E73", "2 3", "triangle"}, {"#CC79A7", "10 3 2 3", "diamond"},
    {"#E69F00", "4 4", "cross"},    {"#000000", "1 2", "plus"},
};

std::string number(double value, const char* format = "%.4g") {
    // Whole tick values as the chapter prints numbers ("10,000"), the rest in 4 digits.
    if (std::string_view(format) == "%.4g" && value == std::floor(value) && std::fabs(value) < 1e15)
        return groupThousands(std::int64_t(value));
    char text[64];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

std::string px(double value) {
    return number(value, "%.1f");
}

struct Axis {
    bool log = false;
    double low = 0, high = 1; // in data units (log: decades as exponents below)
    std::vector<double> ticks;
    double fraction(double value) const {
        if (log) {
            const double v = std::log10(std::max(value, 1e-300));
            return (v - std::log10(low)) / (std::log10(high) - std::log10(low));
        }
        return (value - low) / (high - low);
    }
};

Axis fitAxis(std::vector<double> values, bool log) {
    Axis axis;
    axis.log = log;
    if (log)
        values.erase(
            std::remove_if(values.begin(), values.end(), [](double v) { return !(v > 0); }),
            values.end());
    values.erase(
        std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
        values.end());
    if (values.empty()) {
        axis.low = log ? 1 : 0;
        axis.high = log ? 10 : 1;
    } else {
        const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
        axis.low = *lo;
        axis.high = *hi;
    }
    if (log) {
        int first = int(std::floor(std::log10(axis.low)));
        int last = int(std::ceil(std::log10(axis.high)));
        if (last <= first) last = first + 1;
        axis.low = std::pow(10.0, first);
        axis.high = std::pow(10.0, last);
        const int step = std::max(1, (last - first + 5) / 6);
        for (int e = first; e <= last; e += step) axis.ticks.push_back(std::pow(10.0, e));
        return axis;
    }
    if (axis.low > 0 && axis.low < 0.5 * axis.high) axis.low = 0; // show the origin
    if (axis.high <= axis.low) axis.high = axis.low + (axis.low == 0 ? 1 : std::fabs(axis.low));
    const double raw = (axis.high - axis.low) / 5;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    double step = magnitude;
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * magnitude >= raw) {
            step = m * magnitude;
            break;
        }
    axis.low = std::floor(axis.low / step) * step;
    axis.high = std::ceil(axis.high / step) * step;
    for (double t = axis.low; t <= axis.high + step / 2; t += step)
        axis.ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    return axis;
}

std::string markerSvg(const char* shape, double x, double y, const char* colour) {
    const double r = 4;
    const std::string stroke = std::string(" stroke=\"") + colour + "\" stroke-width=\"1.5\"";
    const std::string fill = std::string(" fill=\"") + colour + "\"";
    const std::string s(shape);
    if (s == "circle")
        return "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"" + px(r) + "\"" + fill +
               "/>";
    if (s == "square")
        return "<rect x=\"" + px(x - r) + "\" y=\"" + px(y - r) + "\" width=\"" + px(2 * r) +
               "\" height=\"" + px(2 * r) + "\" fill=\"white\"" + stroke + "/>";
    if (s == "triangle")
        return "<polygon points=\"" + px(x) + "," + px(y - r - 1) + " " + px(x - r) + "," +
               px(y + r) + " " + px(x + r) + "," + px(y + r) + "\"" + fill + "/>";
    if (s == "diamond")
        return "<polygon points=\"" + px(x) + "," + px(y - r - 1) + " " + px(x + r + 1) + "," +
               px(y) + " " + px(x) + "," + px(y + r + 1) + " " + px(x - r - 1) + "," + px(y) +
               "\" fill=\"white\"" + stroke + "/>";
    if (s == "cross")
        return "<path d=\"M" + px(x - r) + " " + px(y - r) + "L" + px(x + r) + " " + px(y + r) +
               "M" + px(x - r) + " " + px(y + r) + "L" + px(x + r) + " " + px(y - r) + "\"" +
               stroke + "/>";
    return "<path d=\"M" + px(x - r) + " " + px(y) + "L" + px(x + r) + " " + px(y) + "M" + px(x) +
           " " + px(y - r) + "L" + px(x) + " " + px(y + r) + "\"" + stroke + "/>";
}

std::string cellHtml(const Cell& cell, const Column& column) {
    return escapeXml(formatCell(cell, column));
}

} // namespace

const char* agreementName(Agreement agreement) {
    switch (agreement) {
    case Agreement::Agrees:
        return "agrees";
    case Agreement::Differs:
        return "differs";
    case Agreement::NotMeasured:
        return "not measured";
    }
    return "?";
}

std::string escapeXml(const std::string& raw) {
    // Bytes that are not UTF-8 (a token cut inside a character) become U+FFFD.
    const std::string text = models::detail::sanitizeUtf8(raw);
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
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
            // Control characters other than tab and newline are not allowed in XML 1.0.
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
                out += ' ';
            else
                out += c;
        }
    }
    return out;
}

std::string renderSvgChart(const ReportChart& chart) {
    const double width = 720, left = 86, right = 40, top = 46, plotHeight = 250;
    const double plotBottom = top + plotHeight, plotRight = width - right;
    const double legendTop = plotBottom + 58;
    const double height = legendTop + 20.0 * double(chart.series.size()) + 8;
    std::vector<double> xs, ys;
    for (const auto& s : chart.series)
        for (const auto& [x, y] : s.points) {
            xs.push_back(x);
            ys.push_back(y);
        }
    const Axis xAxis = fitAxis(xs, chart.xLog), yAxis = fitAxis(ys, chart.yLog);
    const auto X = [&](double x) { return left + xAxis.fraction(x) * (plotRight - left); };
    const auto Y = [&](double y) { return plotBottom - yAxis.fraction(y) * plotHeight; };

    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"chart-" +
                      escapeXml(chart.id) + "\" width=\"" + px(width) + "\" height=\"" +
                      px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
                      "\" role=\"img\" font-family=\"sans-serif\" font-size=\"12\">\n";
    svg += "<title>" + escapeXml(chart.title) + "</title>\n<desc>" + escapeXml(chart.caption) +
           "</desc>\n";
    svg += "<rect x=\"0\" y=\"0\" width=\"" + px(width) + "\" height=\"" + px(height) +
           "\" fill=\"white\"/>\n";
    svg += "<text class=\"chart-title\" x=\"" + px(width / 2) +
           "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" +
           escapeXml(chart.title) + "</text>\n";
    // Grid and ticks.
    for (double t : xAxis.ticks) {
        const double x = X(t);
        svg += "<line x1=\"" + px(x) + "\" y1=\"" + px(top) + "\" x2=\"" + px(x) + "\" y2=\"" +
               px(plotBottom) + "\" stroke=\"#dddddd\"/>\n<text x=\"" + px(x) + "\" y=\"" +
               px(plotBottom + 16) + "\" text-anchor=\"middle\">" + number(t) + "</text>\n";
    }
    for (double t : yAxis.ticks) {
        const double y = Y(t);
        svg += "<line x1=\"" + px(left) + "\" y1=\"" + px(y) + "\" x2=\"" + px(plotRight) +
               "\" y2=\"" + px(y) + "\" stroke=\"#dddddd\"/>\n<text x=\"" + px(left - 6) +
               "\" y=\"" + px(y + 4) + "\" text-anchor=\"end\">" + number(t) + "</text>\n";
    }
    svg += "<rect x=\"" + px(left) + "\" y=\"" + px(top) + "\" width=\"" + px(plotRight - left) +
           "\" height=\"" + px(plotHeight) + "\" fill=\"none\" stroke=\"black\"/>\n";
    svg += "<text class=\"axis-title\" x=\"" + px((left + plotRight) / 2) + "\" y=\"" +
           px(plotBottom + 36) + "\" text-anchor=\"middle\">" +
           escapeXml(chart.xTitle + (chart.xLog ? " (log scale)" : "")) + "</text>\n";
    svg += "<text class=\"axis-title\" transform=\"translate(18 " + px(top + plotHeight / 2) +
           ") rotate(-90)\" text-anchor=\"middle\">" +
           escapeXml(chart.yTitle + (chart.yLog ? " (log scale)" : "")) + "</text>\n";
    // Series: a line with its dash pattern, then its markers.
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
        const auto& style = kStyles[i % std::size(kStyles)];
        const auto& s = chart.series[i];
        std::string path;
        for (const auto& [x, y] : s.points) {
            if (!std::isfinite(x) || !std::isfinite(y)) continue;
            if ((chart.xLog && x <= 0) || (chart.yLog && y <= 0)) continue;
            path += (path.empty() ? "M" : " L") + px(X(x)) + " " + px(Y(y));
        }
        svg += "<g class=\"series\" data-name=\"" + escapeXml(s.name) + "\">\n";
        if (!path.empty())
            svg += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + style.colour +
                   "\" stroke-width=\"2\"" +
                   (*style.dash ? std::string(" stroke-dasharray=\"") + style.dash + "\"" : "") +
                   "/>\n";
        for (const auto& [x, y] : s.points) {
            if (!std::isfinite(x) || !std::isfinite(y)) continue;
            if ((chart.xLog && x <= 0) || (chart.yLog && y <= 0)) continue;
            svg += markerSvg(style.marker, X(x), Y(y), style.colour) + "\n";
        }
        svg += "</g>\n";
        // Its legend entry: a stretch of the line with one marker, and the name.
        const double ly = legendTop + 20.0 * double(i);
        svg += "<g class=\"legend\"><line x1=\"" + px(left) + "\" y1=\"" + px(ly) + "\" x2=\"" +
               px(left + 40) + "\" y2=\"" + px(ly) + "\" stroke=\"" + style.colour +
               "\" stroke-width=\"2\"" +
               (*style.dash ? std::string(" stroke-dasharray=\"") + style.dash + "\"" : "") + "/>" +
               markerSvg(style.marker, left + 20, ly, style.colour) + "<text x=\"" + px(left + 50) +
               "\" y=\"" + px(ly + 4) + "\">" + escapeXml(s.name) + "</text></g>\n";
    }
    svg += "</svg>";
    return svg;
}

std::string renderTableHtml(const Table& table) {
    std::string html = "<table class=\"data\" id=\"table-" + escapeXml(table.id) +
                       "\">\n<caption>" + escapeXml(table.title) + " <code>" + escapeXml(table.id) +
                       "</code></caption>\n<thead><tr>";
    for (const auto& c : table.columns)
        html += "<th>" + escapeXml(c.name) +
                (c.unit.empty() ? std::string() : " (" + escapeXml(c.unit) + ")") + "</th>";
    html += "</tr></thead>\n<tbody>\n";
    for (const auto& row : table.rows) {
        html += "<tr>";
        for (std::size_t i = 0; i < row.size() && i < table.columns.size(); ++i) {
            const bool numeric = std::holds_alternative<std::int64_t>(row[i]) ||
                                 std::holds_alternative<double>(row[i]);
            html += numeric ? "<td class=\"num\">" : "<td>";
            html += cellHtml(row[i], table.columns[i]) + "</td>";
        }
        html += "</tr>\n";
    }
    html += "</tbody>\n</table>\n";
    for (const auto& note : table.notes) html += "<p class=\"note\">" + escapeXml(note) + "</p>\n";
    return html;
}

nlohmann::json reportJson(const ClassReport& report) {
    nlohmann::json sections = nlohmann::json::array();
    for (const auto& s : report.sections) {
        nlohmann::json tables = nlohmann::json::array();
        for (const auto& t : s.tables) tables.push_back(toJson(t));
        sections.push_back({{"item", s.chapter.item},
                            {"title", s.chapter.title},
                            {"labs", s.labs},
                            {"agreement", agreementName(s.agreement)},
                            {"verdict", s.verdict},
                            {"wall_s", s.wallSeconds},
                            {"tables", tables}});
    }
    return {{"format", "inferscope-class-report"},
            {"version", 1},
            {"profile", report.profile},
            {"total_s", report.totalSeconds},
            {"provenance", toJson(report.provenance)},
            {"sections", sections}};
}

std::string renderReportHtml(const ClassReport& report) {
    std::string title = "InferScope class report";
    std::string html =
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
        "<meta charset=\"utf-8\"/>\n<title>" +
        title +
        "</title>\n<style>\n"
        "body { font-family: sans-serif; max-width: 60em; margin: 1em auto; padding: 0 1em; "
        "color: #111; }\n"
        "h1 { font-size: 1.6em; } h2 { border-top: 2px solid #444; padding-top: 0.5em; "
        "margin-top: 2em; page-break-before: auto; }\n"
        "table.data { border-collapse: collapse; margin: 0.6em 0; font-size: 0.85em; }\n"
        "table.data th, table.data td { border: 1px solid #999; padding: 2px 6px; }\n"
        "table.data caption { text-align: left; font-weight: bold; padding: 4px 0; }\n"
        "td.num { text-align: right; font-variant-numeric: tabular-nums; }\n"
        "blockquote { border-left: 4px solid #888; margin: 0.5em 0; padding: 0.2em 0.8em; "
        "font-style: italic; }\n"
        ".verdict { border: 2px solid #222; padding: 0.5em 0.8em; }\n"
        ".verdict.agrees { border-style: solid; } .verdict.differs { border-style: dashed; }\n"
        ".verdict.not-measured { border-style: dotted; }\n"
        "figure { margin: 1em 0; } figcaption { font-size: 0.9em; }\n"
        "p.note { font-size: 0.8em; color: #333; margin: 0.2em 0; }\n"
        "svg.chart { max-width: 100%; height: auto; }\n"
        "</style>\n</head>\n<body>\n<h1>" +
        title + "</h1>\n";
    html += "<p>The chapter <em>G\u00f8r inference billig: KV cache, batching og kvantisering</em> "
            "beside this machine's measurements, profile <strong>" +
            escapeXml(report.profile) + "</strong>, " + fixed(report.totalSeconds, 1) +
            " s in all. Each section quotes the chapter, shows the tables of the same experiment "
            "the window's panel and inferscope-cli run, and says from the measured numbers "
            "whether they agree.</p>\n";
    html += "<h2 id=\"provenance\">Provenance</h2>\n" + renderTableHtml(report.provenance);
    html += "<h2 id=\"summary\">Summary</h2>\n<table class=\"data\" id=\"table-summary\">"
            "<thead><tr><th>item</th><th>chapter</th><th>agreement</th><th>wall (s)</th></tr>"
            "</thead>\n<tbody>\n";
    for (const auto& s : report.sections)
        html += "<tr><td class=\"num\">" + std::to_string(s.chapter.item) +
                "</td><td><a href=\"#item-" + std::to_string(s.chapter.item) + "\">" +
                escapeXml(s.chapter.title) + "</a></td><td>" + agreementName(s.agreement) +
                "</td><td class=\"num\">" + fixed(s.wallSeconds, 1) + "</td></tr>\n";
    html += "</tbody></table>\n";
    for (const auto& s : report.sections) {
        const std::string agreementClass = s.agreement == Agreement::Agrees    ? "agrees"
                                           : s.agreement == Agreement::Differs ? "differs"
                                                                               : "not-measured";
        html += "<section id=\"item-" + std::to_string(s.chapter.item) + "\">\n<h2>" +
                std::to_string(s.chapter.item) + ". " + escapeXml(s.chapter.title) + "</h2>\n";
        html += "<h3>The chapter</h3>\n<p>From <em>" + escapeXml(s.chapter.section) +
                "</em>:</p>\n<blockquote lang=\"da\">" + escapeXml(s.chapter.quote) +
                "</blockquote>\n<p>" + escapeXml(s.chapter.claim) + "</p>\n";
        html += "<h3>This machine</h3>\n<p class=\"verdict " + agreementClass + "\"><strong>" +
                agreementName(s.agreement) + ":</strong> " + escapeXml(s.verdict) + "</p>\n";
        std::string labs;
        for (const auto& lab : s.labs) labs += (labs.empty() ? "" : ", ") + lab;
        html += "<p class=\"note\">Measured by " + escapeXml(labs) + " in " +
                fixed(s.wallSeconds, 1) + " s.</p>\n";
        for (const auto& chart : s.charts)
            html += "<figure>\n" + renderSvgChart(chart) + "\n<figcaption>" +
                    escapeXml(chart.caption) + "</figcaption>\n</figure>\n";
        for (const auto& table : s.tables) html += renderTableHtml(table);
        html += "</section>\n";
    }
    // The data block: '<', '>' and '&' escaped inside the JSON strings (the only place they
    // can occur), so the block is valid XML text and cannot end the script early.
    std::string json =
        reportJson(report).dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string safe;
    safe.reserve(json.size());
    for (char c : json) {
        if (c == '<')
            safe += "\\u003c";
        else if (c == '>')
            safe += "\\u003e";
        else if (c == '&')
            safe += "\\u0026";
        else
            safe += c;
    }
    html += kJsonStart + safe + kJsonEnd + "\n</body>\n</html>\n";
    return html;
}

nlohmann::json extractReportJson(const std::string& html) {
    const auto start = html.find(kJsonStart);
    if (start == std::string::npos)
        throw std::invalid_argument(
            "no InferScope report data (a <script id=\"inferscope-report\"> "
            "block) in the file");
    const auto begin = start + std::char_traits<char>::length(kJsonStart);
    const auto end = html.find(kJsonEnd, begin);
    if (end == std::string::npos)
        throw std::invalid_argument("the report's data block is not closed");
    nlohmann::json data;
    try {
        data = nlohmann::json::parse(html.substr(begin, end - begin));
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(std::string("the report's data block is not JSON: ") +
                                    e.what());
    }
    if (!data.is_object() || data.value("format", "") != "inferscope-class-report")
        throw std::invalid_argument("the data block is not an InferScope class report");
    return data;
}

} // namespace inferscope::compute::experiments
