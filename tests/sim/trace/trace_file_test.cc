#include "sim/trace/trace_file.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace parity::trace {
namespace {

TraceFile Sample() {
  TraceFile t;
  t.header.schedule_hash = 0x1234abcd5678ef00ull;
  t.header.source = "sim";
  t.header.device = "parity-engine";
  t.header.schedule = "single_tma";
  t.header.policy = "random seed=7";
  t.header.params = {{"STAGES", 4}, {"K_TILES", -3}};
  for (int i = 0; i < 5; ++i) {
    TraceEvent e{};
    e.time = 100 + i;
    e.kind = static_cast<uint8_t>(EventKind::kArrive) + i;
    e.cluster = 2;
    e.cta = 1;
    e.target_cta = static_cast<uint8_t>(i % 2);
    e.agent = static_cast<uint16_t>(i);
    e.object = 3;
    e.index = static_cast<uint16_t>(i);
    e.value = -i;
    e.value2 = 16384 * i;
    e.phase = i & 1;
    e.parity = 1;
    e.pc = static_cast<uint16_t>(7 + i);
    t.events.push_back(e);
  }
  return t;
}

TEST(TraceFileTest, RoundTripInMemoryAndOnDisk) {
  const TraceFile t = Sample();
  const std::string bytes = EncodeTraceFile(t);
  auto back = DecodeTraceFile(bytes, "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->header, t.header);
  ASSERT_EQ(back->events.size(), t.events.size());
  EXPECT_EQ(0, std::memcmp(back->events.data(), t.events.data(),
                           t.events.size() * sizeof(TraceEvent)));

  const std::string path = ::testing::TempDir() + "/round_trip.ptrace";
  ASSERT_TRUE(WriteTraceFile(path, t).ok());
  auto disk = ReadTraceFile(path);
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  EXPECT_EQ(disk->header, t.header);
  EXPECT_EQ(disk->events[4].value2, 16384 * 4);
  EXPECT_EQ(disk->events[4].pc, 11);
}

TEST(TraceFileTest, TruncatedFileNamesTheRecord) {
  const std::string bytes = EncodeTraceFile(Sample());
  const size_t header = bytes.size() - 5 * sizeof(TraceEvent) - 16;
  // Cut inside record 3 (0-based): 3 whole records remain.
  auto r = DecodeTraceFile(std::string_view(bytes).substr(0, header + 3 * 32 + 10), "cut.ptrace");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().rule(), "trace.truncated");
  EXPECT_EQ(r.status().where().file, "cut.ptrace");
  EXPECT_NE(r.status().message().find("record 3 of 5"), std::string::npos)
      << r.status().message();
  // Cut inside the header.
  auto h = DecodeTraceFile(std::string_view(bytes).substr(0, 20), "cut.ptrace");
  EXPECT_EQ(h.status().rule(), "trace.truncated");
  // Records complete, trailer missing.
  auto t = DecodeTraceFile(std::string_view(bytes).substr(0, bytes.size() - 4), "cut.ptrace");
  EXPECT_EQ(t.status().rule(), "trace.truncated");
  // Empty file.
  EXPECT_EQ(DecodeTraceFile("", "empty").status().rule(), "trace.magic");
}

TEST(TraceFileTest, CorruptFilesRejected) {
  const std::string good = EncodeTraceFile(Sample());
  const size_t header = good.size() - 5 * sizeof(TraceEvent) - 16;

  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_EQ(DecodeTraceFile(bad_magic, "f").status().rule(), "trace.magic");

  std::string bad_version = good;
  bad_version[8] = 99;
  EXPECT_EQ(DecodeTraceFile(bad_version, "f").status().rule(), "trace.version");

  std::string bad_kind = good;
  bad_kind[header + 2 * 32 + 8] = static_cast<char>(200);  // record 2's kind byte
  auto k = DecodeTraceFile(bad_kind, "f");
  EXPECT_EQ(k.status().rule(), "trace.bad-kind");
  EXPECT_NE(k.status().message().find("record 2"), std::string::npos);

  std::string flipped = good;
  flipped[header + 32 + 20] ^= 1;  // record 1's value
  EXPECT_EQ(DecodeTraceFile(flipped, "f").status().rule(), "trace.checksum");

  EXPECT_EQ(DecodeTraceFile(good + "x", "f").status().rule(), "trace.trailing");
  EXPECT_EQ(ReadTraceFile(::testing::TempDir() + "/does/not/exist").status().rule(), "trace.io");
}

TEST(TraceFileTest, DumpNamesKinds) {
  const std::string text = DumpTrace(Sample());
  EXPECT_NE(text.find("source=sim"), std::string::npos);
  EXPECT_NE(text.find("# param STAGES = 4"), std::string::npos);
  EXPECT_NE(text.find("0: t=100 c2 cta1 a0 pc7 arrive obj=3[0]@cta0"), std::string::npos) << text;
  EXPECT_NE(text.find("arrive.expect_tx"), std::string::npos);
  EXPECT_EQ(EventKindName(0), "kind(0)");
  EXPECT_EQ(EventKindName(static_cast<uint8_t>(EventKind::kTmaDeliver)), "tma.deliver");
}

}  // namespace
}  // namespace parity::trace
