import Foundation

/// A raw `MeasurementEvent.post("…")` whose name no catalog declares: a typo the compiler cannot
/// see, found by `measurement-events lint`.
///
/// ```
/// Sources/Feed/FeedView.swift:12:31: error: "feed/item_taped" is posted but no catalog declares it; did you mean "feed/item_tapped"?
/// ```
public struct UndeclaredPost: Hashable, Sendable, CustomStringConvertible {
    /// The source file, relative to the package root.
    public var path: String
    /// Where the name's string literal starts (1-based line and column).
    public var position: SourcePosition
    /// The posted name.
    public var name: String
    /// The declared name closest to ``name``, if one is close.
    public var suggestion: String?

    /// Makes a finding.
    ///
    /// - Parameters:
    ///   - path: the source file, relative to the package root.
    ///   - position: where the name's string literal starts.
    ///   - name: the posted name.
    ///   - suggestion: the declared name closest to `name`.
    public init(path: String, position: SourcePosition, name: String, suggestion: String? = nil) {
        self.path = path
        self.position = position
        self.name = name
        self.suggestion = suggestion
    }

    /// In the compilers' `file:line:column: error:` form.
    public var description: String {
        let hint = suggestion.map { "; did you mean \"\($0)\"?" } ?? " (declare it in a catalog, Events/<Module>.json)"
        return "\(path):\(position): error: \"\(name)\" is posted but no catalog declares it\(hint)"
    }

    /// The raw posts in `source` whose name is not in `declared`, in file order.
    ///
    /// Reads `MeasurementEvent.post(` followed by a plain string literal (no interpolation) as
    /// its first argument, outside `//` comments, when the literal is shaped like an event name
    /// (``CatalogReader/isEventName(_:)``); a name built at run time cannot be checked and is left
    /// alone.
    ///
    /// - Parameters:
    ///   - source: a Swift file's text.
    ///   - path: its path, for the findings.
    ///   - declared: every name the catalogs declare.
    /// - Returns: the posts of undeclared names.
    public static func find(in source: String, path: String, declared: Set<String>) -> [UndeclaredPost] {
        let call = "MeasurementEvent.post("
        var findings: [UndeclaredPost] = []
        let candidates = declared.sorted()
        for (index, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let code = line.range(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
            var rest = code[...]
            while let found = rest.range(of: call) {
                rest = rest[found.upperBound...]
                let argument = rest.drop { $0 == " " }
                guard argument.first == "\"", let name = plainLiteral(argument.dropFirst()) else { continue }
                // Not shaped like an event name: text about a post (a usage line), not a post.
                guard !declared.contains(name), CatalogReader.isEventName(name) else { continue }
                let column = line.distance(from: line.startIndex, to: argument.startIndex) + 1
                findings.append(
                    UndeclaredPost(
                        path: path, position: SourcePosition(line: index + 1, column: column), name: name,
                        suggestion: closestMatch(to: name, among: candidates)))
            }
        }
        return findings
    }

    /// The content of a string literal whose opening quote was just read, up to its closing
    /// quote; `nil` when it has an escape or interpolation (not a plain name) or no end.
    private static func plainLiteral(_ text: Substring) -> String? {
        guard let end = text.firstIndex(of: "\"") else { return nil }
        let content = text[..<end]
        return content.contains("\\") ? nil : String(content)
    }
}
