// report.html's writer (tools/report): text is escaped, the embedded results.json cannot end its <script>, several
// gnuplot SVGs on one page keep distinct ids, every figure names its results.json pointer, and a results.json of a
// kind without its own layout still becomes tables. (tests/cli/report_html.sh opens real reports in Chromium.)
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "tools/report/html_report.hpp"
#include "tools/report/percentile_chart.hpp"
#include "tools/report/results_report.hpp"

using namespace ttsim::report;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("report.html escapes text and keeps the embedded JSON inside its script element") {
    ReportInput input;
    input.title = "a <script>alert(1)</script> & co";
    input.kind = "sweep";
    input.results_json = R"({"schema": "x", "name": "</script><b>"})";
    const std::string page = render_html_report(input);
    CHECK(page.find("a &lt;script&gt;alert(1)&lt;/script&gt; &amp; co") != std::string::npos);
    CHECK(page.find("<script>alert") == std::string::npos);
    // Only the page's own three </script> end tags: the error recorder, the JSON block, the behaviour script.
    CHECK(count(page, "</script>") == 3);
    CHECK(page.find(R"("name": "<\/script><b>")") != std::string::npos);
    CHECK(page.find("Content-Security-Policy") != std::string::npos);
}

TEST_CASE("report.html gives each inlined SVG its own ids") {
    const std::string svg = "<?xml version=\"1.0\"?>\n<svg viewBox=\"0 0 10 10\"><defs><path id='gpPt1' d='M0,0'/></defs>"
                            "<use xlink:href='#gpPt1'/><rect fill=\"url(#grad)\"/></svg>";
    ReportInput input;
    input.plots = {{"one", svg}, {"two", svg}};
    const std::string page = render_html_report(input);
    CHECK(page.find("<?xml") == std::string::npos);
    std::set<std::string> ids;
    const std::regex id("id='([^']*)'");
    for (auto it = std::sregex_iterator(page.begin(), page.end(), id); it != std::sregex_iterator(); ++it)
        CHECK(ids.insert((*it)[1]).second);
    CHECK(ids == std::set<std::string>{"p1-gpPt1", "p2-gpPt1"});
    CHECK(page.find("href='#p2-gpPt1'") != std::string::npos);
    CHECK(page.find("url(#p1-grad)") != std::string::npos);
}

TEST_CASE("a results.json without its own layout becomes facts and tables with each figure's pointer") {
    const std::string json = R"({"schema": "ttsim.results/2", "kind": "collective", "name": "allreduce on 8 GPUs",
        "gpus": 8, "rows": [{"bytes": 1024, "time_us": 12.345678, "algo": "ring"},
                            {"bytes": 2048, "time_us": null, "algo": "tree"}]})";
    const ReportInput report = report_from_results(json, "ttsim collective --gpus 8");
    CHECK(report.title == "allreduce on 8 GPUs");
    CHECK(report.summary == std::vector<std::string>{"gpus: 8"});
    REQUIRE(report.tables.size() == 1);
    const Table& t = report.tables[0];
    CHECK(t.columns == std::vector<std::string>{"bytes", "time_us", "algo"});
    REQUIRE(t.rows.size() == 2);
    CHECK(t.rows[0][1].key == "/rows/0/time_us");
    CHECK(t.rows[0][1].value == "12.345678");
    CHECK(t.rows[0][1].text == "12.3");
    CHECK(t.rows[1][1].key == "/rows/1/time_us");   // null: the key stays, no value, a dash
    CHECK(t.rows[1][1].value.empty());
    CHECK(t.rows[0][2].text == "ring");
    const std::string page = render_html_report(report);
    CHECK(page.find(R"(data-key="/rows/0/time_us" data-value="12.345678">12.3<)") != std::string::npos);
}

TEST_CASE("the percentile chart draws every point, the limit and the chosen one") {
    PercentileChart chart;
    chart.title = "bert";
    chart.series = {{"dgx-h100", {{8, 5.0, 5.4, 5.6}, {16, 2.8, 2.9, 3.0}, {32, 1.5, 1.55, 1.6}}}};
    chart.limit_minutes = 2.0;
    chart.limit_label = "deadline 2.00 min at p90";
    chart.chosen = std::pair{std::string("dgx-h100"), 16};
    chart.chosen_label = "answer";
    const std::string svg = percentile_chart_svg(chart);
    CHECK(count(svg, "r=\"3.5\"") == 3);                      // a marker per count
    CHECK(count(svg, "stroke-dasharray") == 1);               // the deadline
    CHECK(svg.find(">answer</text>") != std::string::npos);
    CHECK(svg.find(">deadline 2.00 min at p90</text>") != std::string::npos);
    CHECK(percentile_chart_svg(PercentileChart{}).empty());
}
