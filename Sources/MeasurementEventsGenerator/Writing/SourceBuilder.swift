/// Accumulates generated source text with four-space indentation and `///` doc comments.
struct SourceBuilder {
    private(set) var text = ""
    private var indentation = ""

    mutating func line(_ content: String = "") {
        text += content.isEmpty ? "\n" : indentation + content + "\n"
    }

    /// A doc comment, one `///` line per line of `content`; blank lines become `///`.
    mutating func doc(_ content: String) {
        for line in content.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            let trimmed = line.trimmingTrailingWhitespace
            self.line(trimmed.isEmpty ? "///" : "/// " + trimmed)
        }
    }

    mutating func indented(_ body: (inout SourceBuilder) -> Void) {
        let saved = indentation
        indentation += "    "
        body(&self)
        indentation = saved
    }
}

extension Substring {
    var trimmingTrailingWhitespace: String {
        var result = self
        while let last = result.last, last.isWhitespace { result = result.dropLast() }
        return String(result)
    }
}
