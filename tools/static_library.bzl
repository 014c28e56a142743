"""One static archive of a cc_library and everything it links, for projects that do not use Bazel.

Bazel 4.2.3 has no cc_static_library: a cc_library's objects are spread over one archive per
target. `tools/install` ships one `libparity.a`, so this rule merges the archives of every
library in the transitive closure (the same set a cc_binary depending on the library would link)
with an `ar` MRI script, and writes the link options the closure asks for (system libraries such
as -lpthread) beside it for the pkg-config and CMake files.
"""

def _static_library_impl(ctx):
    archives = []
    link_flags = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            link_flags.extend(linker_input.user_link_flags)
            for lib in linker_input.libraries:
                archive = lib.pic_static_library or lib.static_library
                if archive:
                    archives.append(archive)

    # Keep the first occurrence of each archive and flag: the closure lists shared ones once per
    # path through the graph.
    seen = {}
    unique_archives = []
    for archive in archives:
        if archive.path not in seen:
            seen[archive.path] = True
            unique_archives.append(archive)
    unique_flags = []
    for flag in link_flags:
        if flag not in unique_flags:
            unique_flags.append(flag)

    out = ctx.outputs.out
    mri = ctx.actions.declare_file(ctx.label.name + ".mri")
    ctx.actions.write(
        mri,
        "\n".join(["create " + out.path] +
                  ["addlib " + a.path for a in unique_archives] +
                  ["save", "end", ""]),
    )
    ctx.actions.run_shell(
        inputs = unique_archives + [mri],
        outputs = [out],
        command = "ar -M < {mri} && ranlib {out}".format(mri = mri.path, out = out.path),
        mnemonic = "MergeStaticArchives",
        progress_message = "Merging %d archives into %s" % (len(unique_archives), out.short_path),
    )
    ctx.actions.write(ctx.outputs.link_flags, " ".join(unique_flags) + "\n")
    outputs = [out, ctx.outputs.link_flags]
    return [DefaultInfo(files = depset(outputs), runfiles = ctx.runfiles(files = outputs))]

static_library = rule(
    implementation = _static_library_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
    },
    outputs = {
        "out": "%{name}.a",
        "link_flags": "%{name}.linkflags",
    },
)
