#!/usr/bin/env bash
# Shared by Scripts/update-api-baseline and Scripts/check-api-breakage (sourced, not run).
# Dumps the public API of every library product of the package with the toolchain's
# swift-api-digester, from the modules of a debug build (`swift build` must have run).
#
# The dumps are made on Linux: declarations under `#if canImport(Darwin)`/UIKit/SwiftUI are not
# in them, so a break there is for a reviewer on a Mac to see.

api_baseline_dir="Scripts/APIBaseline"

# The library products' modules, read from the manifest (a new product is checked without
# editing this script).
api_library_modules() {
    swift package dump-package | python3 -c '
import json, sys
package = json.load(sys.stdin)
modules = sorted({t for p in package["products"] if "library" in p["type"] for t in p["targets"]})
print("\n".join(modules))'
}

# api_dump MODULE OUTPUT: the module'"'"'s public API as JSON, without file paths or the tool's
# arguments, so that the same code gives the same bytes on every machine.
api_dump() {
    local module=$1 output=$2 bin
    bin=$(swift build --show-bin-path)
    local includes=(-I "$bin/Modules")
    # C and system-library targets: their module maps.
    local map
    while IFS= read -r map; do includes+=(-I "$(dirname "$map")"); done < <(
        find "$bin" -maxdepth 2 -name module.modulemap -path '*.build/*' -not -path '*-tool.build/*' 2>/dev/null
        find Sources -maxdepth 3 -name module.modulemap 2>/dev/null)
    if [ ! -f "$bin/Modules/$module.swiftmodule" ]; then
        echo "error: $bin/Modules/$module.swiftmodule is missing: run 'swift build' first" >&2
        return 1
    fi
    local log
    log=$(swift-api-digester -dump-sdk -module "$module" "${includes[@]}" -avoid-location -avoid-tool-args \
        -o "$output" 2>&1) || { echo "$log" >&2; echo "error: swift-api-digester failed on $module" >&2; return 1; }
    # The digester writes an empty root when it cannot load the module: never take that for an API.
    if grep -q "Failed to load module" <<< "$log"; then
        echo "$log" >&2
        echo "error: swift-api-digester could not load $module ($output is not its API)" >&2
        return 1
    fi
}
