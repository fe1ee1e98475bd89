#include <doctest/doctest.h>

#include "orchestrator/line_parser.hpp"

using namespace scalebench::orchestrator;

TEST_CASE("Open MPI 4 tag: [jobid,rank]<stdout>: with no space") {
  const auto line = parse_tagged_line("[1,3]<stdout>:Epoch 2/5");
  CHECK(line.rank == 3);
  CHECK(line.tag_stream == Stream::Stdout);
  CHECK(line.payload == "Epoch 2/5");
}

TEST_CASE("Open MPI 5 tag: one space after the colon, namespace jobid") {
  const auto line = parse_tagged_line("[prterun-vm-4242@1,12]<stdout>: Epoch 7/50");
  CHECK(line.rank == 12);
  CHECK(line.payload == "Epoch 7/50");
  const auto error = parse_tagged_line("[1,0]<stderr>: something bad");
  CHECK(error.tag_stream == Stream::Stderr);
  CHECK(error.payload == "something bad");
}

TEST_CASE("horovodrun tag, with and without its 1-second timestamp") {
  const auto plain = parse_tagged_line("[2]<stdout>:Epoch 1/3");
  CHECK(plain.rank == 2);
  CHECK(plain.payload == "Epoch 1/3");
  const auto stamped = parse_tagged_line("Mon Nov 22 10:00:01 2026[0]<stderr>:warning");
  CHECK(stamped.rank == 0);
  CHECK(stamped.tag_stream == Stream::Stderr);
  CHECK(stamped.payload == "warning");
}

TEST_CASE("untagged and garbage lines are untagged, never errors") {
  for (const char* text : {"Epoch 1/3", "", "   ", "[]<stdout>:x", "[a,b]<stdout>:x",
                           "[1,]<stdout>:x", "[,1]<stdout>:x", "random [3]<stdout>:text",
                           "[1,0]<stdin>:x", "\x01\x02\xff"}) {
    const auto line = parse_tagged_line(text);
    CHECK_MESSAGE(!line.rank.has_value(), text);
    CHECK(line.payload == std::string_view(text));
  }
}

TEST_CASE("srun/MPICH `N: text` only when asked for") {
  CHECK(!parse_tagged_line("3: Epoch 1/2").rank);
  const auto line = parse_tagged_line("3: Epoch 1/2", TagOptions{true});
  CHECK(line.rank == 3);
  CHECK(line.payload == "Epoch 1/2");
}

TEST_CASE("epoch markers") {
  CHECK(parse_epoch_marker("Epoch 3/50")->epoch == 3);
  CHECK(parse_epoch_marker("  Epoch 3/50 \r")->total == 50);
  CHECK(!parse_epoch_marker("Epoch 0/5"));
  CHECK(!parse_epoch_marker("Epoch 6/5"));
  CHECK(!parse_epoch_marker("Epoch 1/5 done"));
  CHECK(!parse_epoch_marker("epoch 1/5"));
  CHECK(!parse_epoch_marker("Epoch x/5"));
  CHECK(!parse_epoch_marker("469/469 - loss: 0.5"));
}

TEST_CASE("end-of-epoch line values") {
  const auto end = parse_epoch_end(
      "469/469 - loss: 0.543210 - accuracy: 0.810000 - test_accuracy: 0.840000 - images/s: "
      "12345.6 - epoch_seconds: 4.861234");
  REQUIRE(end);
  CHECK(*end->loss == doctest::Approx(0.54321));
  CHECK(*end->accuracy == doctest::Approx(0.81));
  CHECK(*end->test_accuracy == doctest::Approx(0.84));
  CHECK(*end->images_per_second == doctest::Approx(12345.6));
  CHECK(*end->epoch_seconds == doctest::Approx(4.861234));
  CHECK(!parse_epoch_end("Epoch 1/3"));
  CHECK(!parse_epoch_end("a - b"));
  CHECK(!parse_epoch_end("1/2 - loss: nan-ish"));
}

TEST_CASE("header and training-done lines") {
  const auto header = parse_trainer_header("scalebench-train model=mlp train_images=60000 np=2");
  REQUIRE(header);
  CHECK(header->get("train_images") == "60000");
  CHECK(!header->get("missing"));
  CHECK(!parse_trainer_header("scalebench-train garbage"));
  const auto done = parse_training_done("Training done: epochs=3 seconds=1.5");
  REQUIRE(done);
  CHECK(done->get("epochs") == "3");
}

TEST_CASE("non-UTF-8 bytes become U+FFFD, valid UTF-8 is kept") {
  CHECK(sanitize_utf8("plain") == "plain");
  CHECK(sanitize_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") == "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK(sanitize_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(sanitize_utf8("\xC3") == "\xEF\xBF\xBD");                 // truncated sequence
  CHECK(sanitize_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  CHECK(sanitize_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  CHECK(sanitize_utf8("line\r") == "line");
}

TEST_CASE("line splitter: lines across chunks and a partial last line") {
  LineSplitter splitter;
  std::vector<std::string> lines;
  splitter.feed("[1,0]<stdout>:Ep", lines);
  CHECK(lines.empty());
  splitter.feed("och 1/2\n[1,1]<stdout>:x\n\n[1,0]<std", lines);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "[1,0]<stdout>:Epoch 1/2");
  CHECK(lines[1] == "[1,1]<stdout>:x");
  CHECK(lines[2].empty());
  CHECK(splitter.finish() == "[1,0]<std");
  CHECK(!splitter.finish());
}
