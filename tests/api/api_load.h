// The schedule the API tests check: one TMA tile load (tests/api).
#ifndef PARITY_TESTS_API_API_LOAD_H_
#define PARITY_TESTS_API_API_LOAD_H_

namespace parity::testing {

// One TMA tile load on a count-1 barrier, armed with the tile's bytes times FACTOR: FACTOR = 1 is
// correct, FACTOR = 2 waits for bytes that never come (a deadlock).
constexpr const char* kLoad = R"(schedule api_load
param FACTOR = 1
param TILE_BYTES = 64 * 64 * 2
cluster 1x1
clusters 1
buffer tile[1] bytes TILE_BYTES
barrier full[1] count 1
tensormap tm dtype f16 dims [1024, 1024] box [64, 64] swizzle 128B
role loader threads 1 {
  init full[0]
  fence.mbarrier_init
  arrive.expect_tx full[0] bytes TILE_BYTES * FACTOR
  tma.load tm coords [0, 0] -> tile[0] bar full[0]
  wait full[0] parity 0
  use tile[0]
}
)";

}  // namespace parity::testing

#endif  // PARITY_TESTS_API_API_LOAD_H_
