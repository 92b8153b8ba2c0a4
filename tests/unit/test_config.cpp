#include <catch2/catch.hpp>

#include "sim/config.hpp"
#include "sim/event_queue.hpp"
#include "sim/text.hpp"

using namespace ttsim;

TEST_CASE("config values carry their location and key path", "[config]") {
    auto root = ConfigNode::load_string("name: x\nlink:\n  bandwidth: 400Gb/s\n  latency: 1.5us\n", "t.yaml");
    root.check_keys({"name", "link"});
    auto link = root.required("link");
    CHECK(link.required("bandwidth").as_bandwidth() == Approx(50e9));
    CHECK(link.required("latency").as_time().ps() == 1'500'000);
    CHECK(link.required("latency").location().line == 4);
    CHECK(link.required("latency").path() == "link.latency");
}

TEST_CASE("config errors name file, line and key", "[config]") {
    auto root = ConfigNode::load_string("name: x\nlink:\n  bandwith: 400Gb/s\n", "t.yaml");
    CHECK_THROWS_WITH(root.required("link").check_keys({"bandwidth", "latency"}),
                      Catch::Contains("t.yaml:3") && Catch::Contains("link.bandwith") &&
                          Catch::Contains("did you mean 'bandwidth'"));
    CHECK_THROWS_WITH(root.required("link").required("latency"), Catch::Contains("missing required key 'latency'"));
    auto units = ConfigNode::load_string("bw: 400\n", "u.yaml");
    CHECK_THROWS_WITH(units.required("bw").as_bandwidth(), Catch::Contains("u.yaml:1") && Catch::Contains("no unit"));
    CHECK_THROWS_WITH(ConfigNode::load_string("a: [1, 2\n", "s.yaml"), Catch::Contains("s.yaml:") && Catch::Contains("syntax"));
    auto dup = ConfigNode::load_string("a: 1\na: 2\n", "d.yaml");
    CHECK_THROWS_WITH(dup.check_keys({"a"}), Catch::Contains("duplicate"));
    auto numbers = ConfigNode::load_string("n: 12x\nm: -3\nf: .nan\n", "n.yaml");
    CHECK_THROWS_AS(numbers.required("n").as_int(0, 10), InputError);
    CHECK_THROWS_WITH(numbers.required("m").as_int(0, 10), Catch::Contains("out of range"));
    CHECK_THROWS_AS(numbers.required("f").as_double(0, 1), InputError);
    // A quoted number is a YAML string: refused, with the key and the fix; the plain spelling is read.
    auto quoted = ConfigNode::load_string("model:\n  hidden: \"4096\"\n  heads: '32'\n  layers: 32\n  dropout: \"0.1\"\n", "q.yaml");
    const ConfigNode model = quoted.required("model");
    CHECK_THROWS_WITH(model.required("hidden").as_int(1, 1 << 20),
                      Catch::Contains("q.yaml:2") && Catch::Contains("model.hidden") && Catch::Contains("without quotes"));
    CHECK_THROWS_WITH(model.required("heads").as_int(1, 1 << 20), Catch::Contains("q.yaml:3"));
    CHECK_THROWS_WITH(model.required("dropout").as_double(0, 1), Catch::Contains("quoted"));
    CHECK(model.required("layers").as_int(1, 1 << 20) == 32);
    auto word = ConfigNode::load_string("n: \"abc\"\n", "w.yaml");
    CHECK_THROWS_WITH(word.required("n").as_int(0, 10), Catch::Contains("quoted") && !Catch::Contains("without quotes"));
}

// UTF-8 as RFC 3629 defines it: ASCII, 2-4 byte characters; not a lone Latin-1 byte, a truncated character, an
// overlong form, a UTF-16 surrogate or a code point above U+10FFFF. A scenario holding one is refused at its line.
TEST_CASE("text that is not UTF-8 is found at its byte, and a scenario holding it is refused there", "[config]") {
    constexpr auto npos = std::string_view::npos;
    CHECK(first_invalid_utf8("plain ASCII") == npos);
    CHECK(first_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9D\x84\x9E") == npos);   // é, €, a 4-byte clef
    CHECK(first_invalid_utf8("") == npos);
    CHECK(first_invalid_utf8("caf\xE9") == 3);                 // Latin-1 é
    CHECK(first_invalid_utf8("ab\xE2\x82") == 2);              // truncated €
    CHECK(first_invalid_utf8("\xC0\x80") == 0);                // overlong NUL
    CHECK(first_invalid_utf8("x\xE0\x80\x80") == 1);          // overlong 3-byte form
    CHECK(first_invalid_utf8("\xED\xA0\x80") == 0);           // a UTF-16 surrogate
    CHECK(first_invalid_utf8("\xF4\x90\x80\x80") == 0);      // above U+10FFFF
    CHECK(first_invalid_utf8("\xF5\x80\x80\x80") == 0);
    CHECK(first_invalid_utf8("\x80") == 0);                    // a lone continuation byte
    CHECK(first_invalid_utf8("\xC3\xA9\xC3") == 2);
    const TextPosition at = position_of("a: 1\nname: caf\xE9\n", 14);
    CHECK(at.line == 2);
    CHECK(at.column == 10);
    try {
        ConfigNode::load_string("a: 1\nname: caf\xE9\n", "t.yaml");
        FAIL("a Latin-1 byte was accepted");
    } catch (const InputError& e) {
        CHECK(e.where().line == 2);
        CHECK(e.where().column == 10);
        CHECK_THAT(e.what(), Catch::Contains("not UTF-8"));
    }
    CHECK(ConfigNode::load_string("name: \"caf\xC3\xA9\"\n", "t.yaml").required("name").as_string() == "caf\xC3\xA9");
}

TEST_CASE("events run in (time, insertion) order", "[engine]") {
    Simulation sim;
    std::vector<int> order;
    sim.schedule_at(SimTime::nanoseconds(5), [&] { order.push_back(2); });
    sim.schedule_at(SimTime::nanoseconds(1), [&] { order.push_back(0); });
    sim.schedule_at(SimTime::nanoseconds(5), [&] { order.push_back(3); });
    sim.schedule_at(SimTime::nanoseconds(1), [&] {
        order.push_back(1);
        sim.schedule_after(SimTime::zero(), [&] { order.push_back(10); });  // same time, after those queued
    });
    sim.run();
    CHECK(order == std::vector<int>{0, 1, 10, 2, 3});
    CHECK(sim.now() == SimTime::nanoseconds(5));
    CHECK(sim.events_processed() == 5);
    CHECK_THROWS_AS(sim.schedule_at(SimTime::nanoseconds(1), [] {}), InternalError);
}

// yaml-cpp takes a quoted scalar never closed as running to the end of the file, swallowing the keys after it;
// the loader refuses it at the opening quote. Closed ones, escapes and doubled single quotes included, load.
TEST_CASE("config: a quoted string never closed is a syntax error at its opening quote", "[config]") {
    try {
        ConfigNode::load_string("a: 1\nname: \"tiny run\nmemory_reserve: 60GB\n", "u.yaml");
        FAIL("an unclosed double quote was accepted");
    } catch (const InputError& e) {
        CHECK(e.where().line == 2);
        CHECK(e.where().column == 7);
        CHECK(e.message().find("never closed") != std::string::npos);
    }
    CHECK_THROWS_WITH(ConfigNode::load_string("name: 'tiny\nx: 1\n", "u.yaml"), Catch::Contains("single-quoted"));
    // Behind an anchor or a tag (the node's mark is at the & or !), and after a byte-order mark (which yaml-cpp
    // does not count in its marks): still found, at the right place.
    CHECK_THROWS_WITH(ConfigNode::load_string("a: 1\nname: &n \"bad\nx: 1\n", "u.yaml"), Catch::Contains("never closed"));
    CHECK_THROWS_WITH(ConfigNode::load_string("a: 1\nname: !!str \"bad\nx: 1\n", "u.yaml"), Catch::Contains("never closed"));
    try {
        ConfigNode::load_string("\xEF\xBB\xBF" "a: 1\nname: \"bad\nx: 1\n", "bom.yaml");
        FAIL("an unclosed quote after a BOM was accepted");
    } catch (const InputError& e) {
        CHECK(e.where().line == 2);
        CHECK(e.where().column == 7);
    }
    const ConfigNode ok = ConfigNode::load_string("a: \"say \\\"hi\\\"\"\nb: 'it''s'\nc: [\"x\", 'y']\n", "ok.yaml");
    CHECK(ok.required("a").as_string() == "say \"hi\"");
    CHECK(ok.required("b").as_string() == "it's");
    // Valid files the check must leave alone: a BOM before a comment with an apostrophe and a flow mapping, CRLF
    // line endings, an anchored quoted scalar and its alias, a block scalar holding quotes, a closed multi-line quote.
    const ConfigNode bom = ConfigNode::load_string("\xEF\xBB\xBF# don't\nm: {a: \"y\", b: 'z'}\n", "bom.yaml");
    CHECK(bom.required("m").required("a").as_string() == "y");
    const ConfigNode crlf = ConfigNode::load_string("a: \"x\"\r\nb: 'it''s'\r\nc: &q \"v\"\r\nd: *q\r\n", "crlf.yaml");
    CHECK(crlf.required("d").as_string() == "v");
    const ConfigNode block = ConfigNode::load_string("text: |\n  say \"hi\n  it's\nnext: \"two\n  lines\"\n", "b.yaml");
    CHECK(block.required("next").as_string() == "two lines");
}
