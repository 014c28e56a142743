// A reader for the PTX that nvcc emits for sm_90a: the module's header directives, its entries and
// functions with their parameters, register and shared-memory declarations, and every instruction
// with its guard, its dotted opcode split into base and modifiers, its operands, the PTX line it
// is on and the source line (.loc) it came from. Labels are resolved to instruction indices,
// honouring the `{ }` scopes that inline assembly opens (nvcc repeats an inline asm block's labels
// once per inlined copy).
//
// This is the foundation of `parity import` (issue 28): the importer executes an entry's control
// skeleton over this IR. Nothing here interprets an instruction's meaning.
//
// Errors are Statuses with rules under `import.` and the PTX file:line:col; nothing aborts on bad
// input.
#ifndef PARITY_SIM_PTX_PTX_H_
#define PARITY_SIM_PTX_PTX_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/common/status.h"

namespace parity::ptx {

// A position in the CUDA source, from a `.loc FILE LINE COL` directive. `file` is the index of a
// `.file` directive (Module::files); 0 = unknown.
struct SourcePos {
  int file = 0;
  int line = 0;
  int column = 0;

  bool known() const { return file > 0 && line > 0; }
  bool operator==(const SourcePos&) const = default;
};

enum class OperandKind {
  kRegister,  // %r1, %tid.x, or a scoped name declared with .reg (`p` in inline asm)
  kInteger,   // 42, -1, 0x1F (value in `integer`)
  kFloat,     // 0f3F000000, 0d..., 1.5 (value in `real`, raw bits in `bits` for 0f/0d)
  kSymbol,    // a variable, parameter, function or label name (+ `integer` as offset)
  kAddress,   // [base], [base+imm], [base, extra...]: parts[0] = base, integer = offset
  kVector,    // {a, b, ...}
  kList,      // (a, b, ...) of call
  kSink,      // _
};

struct Operand {
  OperandKind kind = OperandKind::kSink;
  // Register or symbol name, or the literal text of an immediate.
  std::string text;
  // Integer immediate; the offset of an address or of a symbol (`sym+8`).
  int64_t integer = 0;
  double real = 0;
  uint64_t bits = 0;
  // `!%p` (a negated predicate operand).
  bool negated = false;
  // Vector and list elements; an address's base (parts[0], absent for `[imm]`) followed by its
  // further comma-separated elements (the coordinate vector of a tensor copy); for `%p|%q`, the
  // second predicate.
  std::vector<Operand> parts;
  // For a kSymbol naming a label in scope: the index of the instruction the label precedes.
  int label_target = -1;
  // For a kRegister: its slot among the function's registers (Function::registers), so that an
  // interpreter keeps a register file indexed by slot instead of looking names up; -1 otherwise.
  int reg = -1;
  int line = 0;
  int column = 0;

  // [imm]: an address without a base; the immediate is in `integer`.
  bool address_is_absolute = false;

  // The address's base (parts[0]) or nullptr.
  const Operand* AddressBase() const {
    return kind == OperandKind::kAddress && !parts.empty() && !address_is_absolute ? &parts[0]
                                                                                   : nullptr;
  }
};

struct Instruction {
  // `mbarrier.try_wait.parity.shared::cta.b64`: base `mbarrier`, modifiers {try_wait, parity,
  // shared::cta, b64} (each without its dot).
  std::string opcode;
  std::string base;
  std::vector<std::string> modifiers;
  // Guard `@%p` / `@!%p`; empty when unguarded.
  std::string guard;
  bool guard_negated = false;
  // The guard's register slot (Function::registers); -1 when unguarded.
  int guard_reg = -1;
  std::vector<Operand> operands;
  // Where the instruction is in the PTX (1-based).
  int line = 0;
  int column = 0;
  // The innermost .loc in effect (possibly inside an inlined function) and the outermost call
  // site of its inlining chain (the kernel body's line); equal when nothing was inlined.
  SourcePos source;
  SourcePos call_site;
  // The whole inlining chain, outermost first (call_site ... source); empty without a .loc.
  std::vector<SourcePos> inline_chain;
  // The `{ }` scope the instruction is in (Function::scopes).
  int scope = 0;

  bool HasModifier(std::string_view m) const;
  // `bra` and friends: the resolved label target of the first operand, or -1.
  int BranchTarget() const;
};

// A `.param` of an entry or function (or a return value of a .func).
struct Param {
  std::string name;
  std::string type;        // b8, u32, u64, ...
  int align = 0;           // .align N (0 = natural)
  int64_t array_size = 0;  // name[N]; 0 = scalar
  std::string ptr_space;   // .ptr .shared / .global ...
  int ptr_align = 0;
  int line = 0;

  int64_t SizeBytes() const;
};

// A variable declaration: .shared, .global, .const, .local (module scope or inside a body).
struct Variable {
  std::string space;  // shared, global, const, local, param (a call sequence's)
  std::string name;
  std::string type;
  int align = 0;
  int vector = 1;             // .v2 / .v4
  std::vector<int64_t> dims;  // name[8192]; an unsized trailing `[]` is -1
  bool is_extern = false;     // `.extern .shared ... name[]`: the dynamic shared segment
  int line = 0;

  // Bytes; -1 when unsized (extern dynamic shared memory).
  int64_t SizeBytes() const;
};

// `.reg .b32 %r<17>;` (count 17: %r0..%r16) or `.reg .pred p;` (count 0: the name itself).
struct RegDecl {
  std::string type;
  std::string name;
  int count = 0;
  int scope = 0;
  int line = 0;
};

// One `{ }` scope of a body; scope 0 is the body itself.
struct Scope {
  int parent = -1;
  std::map<std::string, int, std::less<>> labels;  // label -> instruction index
};

struct Function {
  bool is_entry = false;  // .entry (a kernel) or .func
  bool visible = false;
  bool has_body = false;  // false for a prototype
  std::string name;       // as in the PTX (mangled)
  std::vector<Param> params;
  std::vector<Param> returns;
  // Performance directives (.maxntid, .reqntid, .reqnctapercluster, ...): name -> values.
  std::map<std::string, std::vector<int64_t>> directives;
  std::vector<RegDecl> regs;
  std::vector<Variable> variables;  // declared in the body (nvcc's "demoted" __shared__)
  std::vector<Instruction> instructions;
  std::vector<Scope> scopes;
  // Every register name the instructions use (operands and guards), by slot: one slot per
  // distinct name, as scoped registers of inline asm blocks share a name's value.
  std::vector<std::string> registers;
  int line = 0;

  // The index of the instruction `label` precedes, looked up from `scope` outwards; -1 if none.
  int FindLabel(std::string_view label, int scope = 0) const;
  const Param* FindParam(std::string_view name) const;
};

struct Module {
  std::string path;  // the file as named to the reader (for messages)
  std::string version;
  std::string target;  // the first .target item, e.g. sm_90a
  std::vector<std::string> target_options;
  int target_line = 0;
  int address_size = 0;
  std::map<int, std::string> files;  // .file N "name"
  std::vector<Variable> globals;     // module-scope variables (incl. extern dynamic shared)
  std::vector<Function> functions;

  // "file:line" of a source position, with the .file's name; "" when unknown.
  std::string SourceString(const SourcePos& pos) const;
  // "path:line" of an instruction in the PTX.
  std::string PtxString(const Instruction& inst) const;
};

// Parses PTX text. `path` names the input in messages.
Expected<Module> ParseModule(std::string_view text, std::string path);
// Reads and parses a .ptx file.
Expected<Module> ReadModule(const std::string& path);

// The demangled form of an Itanium-mangled name, or the name itself when it is not mangled.
std::string Demangle(const std::string& name);
// The bare function name of a (demangled) signature: `ns::f<int>(int*)` -> `f`.
std::string BareName(const std::string& demangled);

// The entry (.entry) named `name`: the mangled name, the full demangled signature, or the bare
// function name; `import.entry-not-found` (listing the entries) or `import.entry-ambiguous`.
Expected<const Function*> FindEntry(const Module& module, std::string_view name);

// `import.ptx-target` unless the module targets sm_90 / sm_90a with 64-bit addresses.
Status RequireHopperTarget(const Module& module);

}  // namespace parity::ptx

#endif  // PARITY_SIM_PTX_PTX_H_
