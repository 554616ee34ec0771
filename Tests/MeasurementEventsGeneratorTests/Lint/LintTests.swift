import Foundation
import MeasurementEventsGenerator
import XCTest

/// `measurement-events lint`: a raw post of a name no catalog declares is found with its file and
/// line, and a near miss gets a did-you-mean.
final class LintTests: XCTestCase {
    private let declared: Set<String> = ["feed/item_tapped", "feed/opened"]

    func testAMisspeltNameIsFoundWithLineColumnAndSuggestion() {
        let source = """
            import MeasurementEvents

            func tap() {
                MeasurementEvent.post("feed/item_taped", args: ["position": 3])
            }
            """
        XCTAssertEqual(
            UndeclaredPost.find(in: source, path: "Sources/Feed/Feed.swift", declared: declared).map(\.description),
            [
                #"Sources/Feed/Feed.swift:4:27: error: "feed/item_taped" is posted but no catalog declares it; did you mean "feed/item_tapped"?"#
            ])
    }

    func testDeclaredNamesCommentsAndNamesBuiltAtRunTimeAreLeftAlone() {
        let source = #"""
            MeasurementEvent.post("feed/opened")
            // MeasurementEvent.post("feed/in_a_comment")
            /// MeasurementEvent.post("feed/in_a_doc_comment")
            MeasurementEvent.post(name)
            MeasurementEvent.post("feed/\(kind)")
            let usage = "MeasurementEvent.post(\"…\")"; MeasurementEvent.post("Not An Event Name")
            MeasurementEvent.post( "settings/opened" , to: center); MeasurementEvent.post("feed/item_tapped")
            """#
        XCTAssertEqual(
            UndeclaredPost.find(in: source, path: "A.swift", declared: declared).map(\.description),
            [
                #"A.swift:7:24: error: "settings/opened" is posted but no catalog declares it (declare it in a catalog, Events/<Module>.json)"#
            ])
    }

    func testTheCommandListsEveryUndeclaredPostAndFails() throws {
        let package = try TemporaryPackage(copying: Repository.golden)
        defer { package.remove() }
        try package.write(
            "Sources/Shop/Checkout.swift",
            """
            import MeasurementEvents
            func pay() { MeasurementEvent.post("shop/checkout/complete") }
            func open() { MeasurementEvent.post("shop/opened") }
            """)
        var output: [String] = []
        var errors: [String] = []
        let code = GeneratorCommand(subcommand: .lint, packagePath: package.root.path).run(
            output: { output.append($0) }, errorOutput: { errors.append($0) })
        XCTAssertEqual(code, GeneratorCommand.exitFailure)
        XCTAssertEqual(
            errors,
            [
                #"Sources/Shop/Checkout.swift:2:36: error: "shop/checkout/complete" is posted but no catalog declares it; did you mean "shop/checkout/completed"?"#,
                "1 post of undeclared names in 4 Swift files under Sources/",
            ])
        XCTAssertEqual(output, [])
    }

    func testACleanPackagePasses() throws {
        let package = try TemporaryPackage(copying: Repository.golden)
        defer { package.remove() }
        var output: [String] = []
        let code = GeneratorCommand(subcommand: .lint, packagePath: package.root.path).run(
            output: { output.append($0) }, errorOutput: { XCTFail($0) })
        XCTAssertEqual(code, GeneratorCommand.exitSuccess)
        XCTAssertEqual(output, ["3 Swift files under Sources/ post only declared names"])
        XCTAssertEqual(try GeneratorCommand.parse(["lint"]).subcommand, .lint)
    }
}
