// The one JSON writer: its two layouts, its number formats, and that what it writes parses back.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "sim/core/json.h"
#include "sim/core/json_writer.h"

using namespace memwall;

TEST_CASE("JsonWriter lays out members one per line, or inline where a container asks", "[json]") {
  using Layout = JsonWriter::Layout;
  JsonWriter w;
  w.open("", '{');
  w.string("name", "a \"quoted\" name");
  w.integer("count", 3);
  w.open("row", '{', Layout::kInline);
  w.number("x", 0.5);
  w.open("list", '[');  // inside an inline container: inline too
  w.integer("", 1);
  w.integer("", 2);
  w.close();
  w.close();
  w.open("rows", '[');
  w.open("", '{', Layout::kInline);
  w.boolean("ok", true);
  w.null("missing");
  w.close();
  w.close();
  w.open("empty", '[');
  w.close();
  w.close();
  const std::string text = w.take();
  CHECK(text ==
        "{\n"
        "  \"name\": \"a \\\"quoted\\\" name\",\n"
        "  \"count\": 3,\n"
        "  \"row\": {\"x\": 0.5, \"list\": [1, 2]},\n"
        "  \"rows\": [\n"
        "    {\"ok\": true, \"missing\": null}\n"
        "  ],\n"
        "  \"empty\": []\n"
        "}\n");
  const JsonValue doc = parse_json(text, "test");
  CHECK(doc.get("row")->get("list")->items.size() == 2);
  CHECK(w.take() == "\n");  // take() leaves the writer empty
}

TEST_CASE("JsonWriter writes numbers in a fixed format and non-finite ones as null", "[json]") {
  JsonWriter w;
  w.open("", '{', JsonWriter::Layout::kInline);
  w.number("third", 1.0 / 3.0);
  w.number("six", 1.0 / 3.0, 6);
  w.number("exact", 0.1, 17);
  w.number("inf", std::numeric_limits<double>::infinity());
  w.number("nan", std::nan(""));
  w.raw("fixed", "1.500000000e-06");
  w.param("digits", "128");
  w.param("leading_zero", "007");
  w.param("word", "fp16");
  w.close();
  CHECK(w.take() ==
        "{\"third\": 0.333333333, \"six\": 0.333333, \"exact\": 0.10000000000000001, "
        "\"inf\": null, \"nan\": null, \"fixed\": 1.500000000e-06, \"digits\": 128, "
        "\"leading_zero\": \"007\", \"word\": \"fp16\"}\n");
}
