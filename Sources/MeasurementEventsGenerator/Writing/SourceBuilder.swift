import MeasurementEvents
import MeasurementEventsAggregator

/// Accumulates generated source text with four-space indentation and `///` doc comments.
struct SourceBuilder {
    private(set) var text = ""
    private var indentation = ""

    mutating func line(_ content: String = "") {
        text += content.isEmpty ? "\n" : indentation + content + "\n"
    }

    /// A doc comment, one `///` line per line of `content`; blank lines become `///`.
    mutating func doc(_ content: String) {
        for line in Self.docLines(content) {
            self.line(line.isEmpty ? "///" : "/// " + line)
        }
    }

    /// The lines of a text for a doc comment: split at every kind of line break, trailing
    /// whitespace trimmed, and other invisible characters escaped (a raw NUL does not compile).
    static func docLines(_ content: String) -> [String] {
        content.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map {
            $0.trimmingTrailingWhitespace.escapingInvisibleCharacters
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
