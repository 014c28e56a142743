// The CUTLASS-style TMA multicast main loop of pipelines.h, built with ProgramBuilder.
#include "sim/testing/pipelines.h"

#include <cstdint>

#include "sim/testing/program_builder.h"

namespace parity::testing {

ir::Program GemmPipeline(const GemmPipelineShape& g) {
  using ir::BinaryOp;
  using ir::Builtin;
  ProgramBuilder b("gemm_tma_multicast");
  const int64_t tile_bytes = 128 * 64 * 2;
  const int64_t a_slice_rows = 128 / g.cluster_n, b_slice_rows = 128 / g.cluster_m;
  const int64_t a_slice = a_slice_rows * 64 * 2, b_slice = b_slice_rows * 64 * 2;
  const uint32_t p_stages = b.Param("STAGES", g.stages);
  const uint32_t p_k = b.Param("K_TILES", g.k_tiles);
  const uint32_t p_cons = b.Param("CONSUMERS", g.consumers);
  b.Cluster(g.cluster_m, g.cluster_n, g.clusters);
  const uint32_t buf_a = b.Buffer("A", g.stages, tile_bytes);
  const uint32_t buf_b = b.Buffer("B", g.stages, tile_bytes);
  const uint32_t full = b.Barrier("full", b.P(p_stages), b.C(1));
  auto m = b.B(Builtin::kClusterM), n = b.B(Builtin::kClusterN);
  const uint32_t empty = b.Barrier(
      "empty", b.P(p_stages),
      b.Bin(BinaryOp::kAdd,
            b.Bin(BinaryOp::kMul, b.Bin(BinaryOp::kSub, b.Bin(BinaryOp::kAdd, m, n), b.C(1)),
                  b.P(p_cons)),
            b.C(g.empty_count_delta)));
  const uint32_t tm_a = b.TensorMap2D("tmA", 4096, 4096, 64, a_slice_rows);
  const uint32_t tm_b = b.TensorMap2D("tmB", 4096, 4096, 64, b_slice_rows);
  auto cx = [&] { return b.B(Builtin::kCtaX); };
  auto cy = [&] { return b.B(Builtin::kCtaY); };
  // row mask: CTAs with my cta_x (ranks cta_x + y * M); col mask: CTAs with my cta_y.
  auto row_mask = [&] {
    ir::ExprId mask = b.C(0);
    for (int64_t y = 0; y < g.cluster_n; ++y) {
      mask = b.Bin(BinaryOp::kBitOr, mask,
                   b.Bin(BinaryOp::kShl, b.C(1),
                         b.Bin(BinaryOp::kAdd, cx(), b.C(y * g.cluster_m))));
    }
    return mask;
  };
  auto col_mask = [&] {
    return b.Bin(BinaryOp::kShl, b.C((int64_t{1} << g.cluster_m) - 1),
                 b.Bin(BinaryOp::kMul, cy(), b.C(g.cluster_m)));
  };
  auto stage_of = [&](uint32_t k) { return b.Bin(BinaryOp::kMod, b.V(k), b.P(p_stages)); };
  auto round_parity = [&](uint32_t k) {
    return b.Bin(BinaryOp::kBitAnd, b.Bin(BinaryOp::kDiv, b.V(k), b.P(p_stages)), b.C(1));
  };

  // Producer: vars 0 = i, 1 = k, 2 = s.
  {
    ir::Role& r = b.Role("producer", 1, 1, 3);
    ir::Block init_loop = {
        ProgramBuilder::Op(ir::MbarrierInit{b.Bar(full, b.V(0)), ir::kNoExpr}),
        ProgramBuilder::Op(ir::MbarrierInit{b.Bar(empty, b.V(0)), ir::kNoExpr}),
    };
    ir::Block init = {ProgramBuilder::For(0, b.C(0), b.P(p_stages), init_loop),
                      ProgramBuilder::Op(ir::Fence{ir::Fence::Kind::kMbarrierInit})};
    ir::MbarrierWait wait_empty;
    wait_empty.bar = b.Bar(empty, b.V(2));
    wait_empty.parity = g.producer_parity_starts_at_0
                            ? round_parity(1)
                            : b.Bin(BinaryOp::kBitXor, round_parity(1), b.C(1));
    ir::MbarrierArrive expect;
    expect.bar = b.Bar(full, b.V(2));
    ir::ExprId bytes = b.C(tile_bytes * 2);
    if (g.extra_tx_cta >= 0) {
      bytes = b.Bin(BinaryOp::kAdd, bytes,
                    b.Sel(b.Bin(BinaryOp::kEq, b.B(Builtin::kCtaRank), b.C(g.extra_tx_cta)),
                          b.C(a_slice), b.C(0)));
    }
    expect.expect_tx = bytes;
    ir::TmaLoad load_a;
    load_a.tensor_map = tm_a;
    load_a.coords = {b.Bin(BinaryOp::kMul, b.V(1), b.C(64)),
                     b.Bin(BinaryOp::kAdd, b.Bin(BinaryOp::kMul, cx(), b.C(128)),
                           b.Bin(BinaryOp::kMul, cy(), b.C(a_slice_rows)))};
    load_a.dst = b.Buf(buf_a, b.V(2));
    load_a.dst.offset = b.Bin(BinaryOp::kMul, cy(), b.C(a_slice));
    load_a.dst.bytes = b.C(a_slice);
    load_a.bar = b.Bar(full, b.V(2));
    load_a.multicast_mask = row_mask();
    ir::TmaLoad load_b;
    load_b.tensor_map = tm_b;
    load_b.coords = {b.Bin(BinaryOp::kMul, b.V(1), b.C(64)),
                     b.Bin(BinaryOp::kAdd, b.Bin(BinaryOp::kMul, cy(), b.C(128)),
                           b.Bin(BinaryOp::kMul, cx(), b.C(b_slice_rows)))};
    load_b.dst = b.Buf(buf_b, b.V(2));
    load_b.dst.offset = b.Bin(BinaryOp::kMul, cx(), b.C(b_slice));
    load_b.dst.bytes = b.C(b_slice);
    load_b.bar = b.Bar(full, b.V(2));
    load_b.multicast_mask = col_mask();
    ir::Block body = {ProgramBuilder::Let(2, stage_of(1)), ProgramBuilder::Op(wait_empty),
                      ProgramBuilder::Op(expect), ProgramBuilder::Op(load_a),
                      ProgramBuilder::Op(load_b)};
    r.body = {ProgramBuilder::If(b.Bin(BinaryOp::kEq, b.B(Builtin::kAgent), b.C(0)), init),
              ProgramBuilder::Op(ir::ClusterArrive{}), ProgramBuilder::Op(ir::ClusterWait{}),
              ProgramBuilder::For(1, b.C(0), b.P(p_k), body)};
  }
  // Consumer: vars 1 = k, 2 = s.
  {
    ir::Role& r = b.Role("consumer", 0, 128, 3);
    r.count = b.P(p_cons);
    ir::MbarrierWait wait_full;
    wait_full.bar = b.Bar(full, b.V(2));
    wait_full.parity = round_parity(1);
    ir::MbarrierArrive release;
    release.bar = b.Bar(empty, b.V(2));
    release.mask = b.Bin(BinaryOp::kBitOr, row_mask(), col_mask());
    ir::Block body = {ProgramBuilder::Let(2, stage_of(1)), ProgramBuilder::Op(wait_full),
                      ProgramBuilder::Op(ir::BufferAccess{b.Buf(buf_a, b.V(2)), false}),
                      ProgramBuilder::Op(ir::BufferAccess{b.Buf(buf_b, b.V(2)), false}),
                      ProgramBuilder::Op(release)};
    r.body = {ProgramBuilder::Op(ir::ClusterArrive{}), ProgramBuilder::Op(ir::ClusterWait{}),
              ProgramBuilder::For(1, b.C(0), b.P(p_k), body)};
  }
  return std::move(b.program());
}

}  // namespace parity::testing
