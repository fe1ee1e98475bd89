#include <doctest/doctest.h>

#include <string_view>
#include <vector>

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
  for (const char* text :
       {"Epoch 1/3", "", "   ", "[]<stdout>:x", "[a,b]<stdout>:x", "[1,]<stdout>:x",
        "[,1]<stdout>:x", "random [3]<stdout>:text", "[1,0]<stdin>:x", "\x01\x02\xff"}) {
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
  CHECK(sanitize_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  CHECK(sanitize_utf8("a\xFF"
                      "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(sanitize_utf8("\xC3") == "\xEF\xBF\xBD");                  // truncated sequence
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

// ---- the allreduce benchmark (scalebench-train --benchmark allreduce) -------------------------

// Lines as `mpirun -np 2 --tag-output scalebench-train --benchmark allreduce` prints them (the
// values from runs on the 2-core development machine).
const char* const kRealBenchmark[] = {
    "[1,0]<stdout>:# scalebench-train benchmark=allreduce transport=mpi np=2 backend=cpu "
    "type=float op=sum in_place=yes min_bytes=8 max_bytes=16777216 step_factor=4 "
    "warmup_iterations=5 iterations=20 time=mean_over_ranks",
    "[1,0]<stdout>:#",
    "[1,0]<stdout>:#        size         count    type   redop        time     algbw     busbw  "
    "#wrong",
    "[1,0]<stdout>:#         (B)    (elements)                        (us)    (GB/s)    (GB/s)",
    "[1,0]<stdout>:            8             2   float     sum       0.823    0.0097    0.0097"
    "       0",
    "[1,0]<stdout>:      8388608       2097152   float     sum    3462.160    2.4229    2.4229"
    "       0",
    "[1,0]<stdout>:# Out of bounds values : 0 OK",
    "[1,0]<stdout>:# Avg bus bandwidth    : 1.2163",
};

TEST_CASE("allreduce benchmark: header, rows and the last line of real tagged output") {
  std::vector<std::string_view> payloads;
  for (const char* line : kRealBenchmark) {
    const auto tagged = parse_tagged_line(line);
    CHECK(tagged.rank == 0);
    payloads.push_back(tagged.payload);
  }
  const auto header = parse_benchmark_header(payloads[0]);
  REQUIRE(header);
  CHECK(header->get("benchmark") == "allreduce");
  CHECK(header->get("transport") == "mpi");
  CHECK(header->get("np") == "2");
  CHECK_FALSE(parse_trainer_header(payloads[0]));  // not a training run's header

  for (std::size_t i : {1, 2, 3, 6, 7}) {
    CAPTURE(payloads[i]);
    CHECK_FALSE(parse_allreduce_row(payloads[i]));
  }
  const auto small = parse_allreduce_row(payloads[4]);
  REQUIRE(small);
  CHECK(small->bytes == 8);
  CHECK(small->count == 2);
  CHECK(small->type == "float");
  CHECK(small->redop == "sum");
  CHECK(small->time_us == 0.823);
  CHECK(small->algbw_gbs == 0.0097);
  CHECK(small->busbw_gbs == 0.0097);
  CHECK(small->wrong == 0);
  const auto large = parse_allreduce_row(payloads[5]);
  REQUIRE(large);
  CHECK(large->bytes == 8388608);
  CHECK(large->time_us == 3462.16);
  CHECK(large->busbw_gbs == 2.4229);

  CHECK(parse_average_bus_bandwidth(payloads[7]) == 1.2163);
  CHECK_FALSE(parse_average_bus_bandwidth(payloads[6]));
  CHECK_FALSE(parse_average_bus_bandwidth(payloads[0]));
}

TEST_CASE("allreduce benchmark: garbage is never a row, a header or a last line") {
  // Tabs separate as well as spaces; wrong is a count.
  CHECK(parse_allreduce_row("16\t4\tfloat\tsum\t1.5\t0.0107\t0.0107\t2")->wrong == 2);
  for (const char* line : {
           "",
           "   ",
           "8 2 float sum 0.823 0.0097 0.0097",          // 7 fields
           "8 2 float sum 0.823 0.0097 0.0097 0 extra",  // 9 fields
           "8 2 float sum -0.823 0.0097 0.0097 0",       // negative time
           "8 2 float sum nan 0.0097 0.0097 0",
           "8 2 float sum 0.823 inf 0.0097 0",
           "-8 2 float sum 0.823 0.0097 0.0097 0",
           "8 2.5 float sum 0.823 0.0097 0.0097 0",
           "8 2 float sum 0.823 0.0097 0.0097 N/A",  // nccl-tests without a check
           "8 2 1float sum 0.823 0.0097 0.0097 0",
           "8 2 float s-m 0.823 0.0097 0.0097 0",
           "8 2 float sum 0.823us 0.0097 0.0097 0",
           "99999999999999999999 2 float sum 0.823 0.0097 0.0097 0",
           "# 8 2 float sum 0.823 0.0097 0.0097",
           "Epoch 1/3",
           "469/469 - loss: 0.5 - accuracy: 0.8 - epoch_seconds: 1.0",
           "scalebench-train model=mlp train_images=60000",
           "\xff\xfe 2 float sum 0.823 0.0097 0.0097 0",
       }) {
    CAPTURE(line);
    CHECK_FALSE(parse_allreduce_row(line));
    CHECK_FALSE(parse_average_bus_bandwidth(line));
  }
  for (const char* line : {"scalebench-train benchmark=allreduce np=2",  // no `#`
                           "# scalebench-train model=mlp np=2",          // no benchmark key
                           "# scalebench-train",                         // no keys at all
                           "# scalebench-train benchmark=allreduce broken",
                           "#scalebench-trainer benchmark=allreduce", "#", ""}) {
    CAPTURE(line);
    CHECK_FALSE(parse_benchmark_header(line));
  }
  CHECK(parse_benchmark_header("  #  scalebench-train benchmark=allreduce  "));
  CHECK(parse_average_bus_bandwidth("#Avg bus bandwidth: 3") == 3.0);
  CHECK_FALSE(parse_average_bus_bandwidth("# Avg bus bandwidth    : -1"));
  CHECK_FALSE(parse_average_bus_bandwidth("# Avg bus bandwidth    : fast"));
  CHECK_FALSE(parse_average_bus_bandwidth("Avg bus bandwidth    : 1.0"));
}

TEST_CASE("LineSplitter keeps memory bounded: a longer line is cut and says how much was dropped") {
  LineSplitter splitter(8);
  std::vector<std::string> lines;
  splitter.feed("0123456789", lines);
  splitter.feed(std::string(1'000'000, 'x'), lines);  // one line, arriving in chunks
  CHECK(lines.empty());
  splitter.feed("abc\nshort\n", lines);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "01234567 [scalebench: line cut: 1000005 more bytes not stored]");
  CHECK(lines[1] == "short");
  splitter.feed("0123456789", lines);
  CHECK(splitter.finish() == "01234567 [scalebench: line cut: 2 more bytes not stored]");
  CHECK_FALSE(splitter.finish());
  CHECK(kMaxLineBytes == 64 * 1024);
}
