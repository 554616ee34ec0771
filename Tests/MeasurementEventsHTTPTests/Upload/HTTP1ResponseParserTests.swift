import XCTest

@testable import MeasurementEventsHTTP

/// Replies read byte by byte and whole: framing as RFC 9112 §6.3 orders it, and every malformed
/// or oversized reply an error, never a crash.
final class HTTP1ResponseParserTests: XCTestCase {
    private func parse(
        _ text: String, limits: HTTP1ResponseParser.Limits = .init(), byteByByte: Bool = false, end: Bool = false
    ) throws(HTTP1ResponseParser.Problem) -> (HTTPResponse?, keeps: Bool) {
        var parser = HTTP1ResponseParser(limits: limits)
        let bytes = Array(text.utf8)
        var complete = false
        if byteByByte {
            for index in bytes.indices where !complete { complete = try parser.consume(bytes[index...index]) }
        } else {
            complete = try parser.consume(bytes[...])
        }
        if !complete, end { complete = parser.consumeEnd() }
        return (complete ? parser.response : nil, parser.keepsConnection)
    }

    func testContentLengthReadByteByByte() throws {
        let (response, keeps) = try parse(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello", byteByByte: true)
        XCTAssertEqual(
            response,
            HTTPResponse(status: 200, headers: ["content-length": "5", "x-a": "1, 2"], body: Array("hello".utf8)))
        XCTAssertTrue(keeps)
    }

    func testChunkedWithExtensionsAndTrailers() throws {
        let (response, keeps) = try parse(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;a=b\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n",
            byteByByte: true)
        XCTAssertEqual(response?.body, Array("abcde".utf8))
        XCTAssertTrue(keeps)
    }

    func testInterimRepliesAreSkipped() throws {
        let (response, _) = try parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n")
        XCTAssertEqual(response?.status, 204)
    }

    func testABodyUntilTheConnectionClosesNeedsTheEnd() throws {
        XCTAssertNil(try parse("HTTP/1.0 200 OK\r\n\r\npartial").0)
        let (response, keeps) = try parse("HTTP/1.0 200 OK\r\n\r\nall of it", end: true)
        XCTAssertEqual(response?.body, Array("all of it".utf8))
        XCTAssertFalse(keeps)
    }

    func testConnectionCloseIsHonoured() throws {
        XCTAssertFalse(try parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").keeps)
    }

    func testBareLineFeedsAreAccepted() throws {
        XCTAssertEqual(
            try parse("HTTP/1.1 503 Busy\nRetry-After: 3\nContent-Length: 0\n\n").0?.headers["retry-after"], "3")
    }

    func testMalformedRepliesAreProblems() {
        let cases = [
            "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 099 Low\r\n\r\n", "<html>\r\n\r\n",
            "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 101 Switching\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc",
        ]
        for text in cases {
            XCTAssertThrowsError(try parse(text), text.debugDescription) { error in
                guard case .malformed = error as? HTTP1ResponseParser.Problem else {
                    return XCTFail("\(text.debugDescription): \(error)")
                }
            }
        }
    }

    func testOversizedHeadAndBodyAreProblems() {
        var limits = HTTP1ResponseParser.Limits()
        limits.head = 100
        limits.body = 10
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 200), limits: limits)) {
            XCTAssertEqual($0 as? HTTP1ResponseParser.Problem, .tooLarge(part: "head", limit: 100))
        }
        XCTAssertThrowsError(try parse("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n", limits: limits)) {
            XCTAssertEqual($0 as? HTTP1ResponseParser.Problem, .tooLarge(part: "body", limit: 10))
        }
        XCTAssertThrowsError(
            try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n", limits: limits)
        ) { XCTAssertEqual($0 as? HTTP1ResponseParser.Problem, .tooLarge(part: "body", limit: 10)) }
        XCTAssertThrowsError(try parse("HTTP/1.0 200 OK\r\n\r\n" + String(repeating: "b", count: 11), limits: limits)) {
            XCTAssertEqual($0 as? HTTP1ResponseParser.Problem, .tooLarge(part: "body", limit: 10))
        }
    }

    func testBytesAfterTheReplyMakeTheConnectionUnusable() throws {
        let (response, keeps) = try parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
        XCTAssertEqual(response?.body, Array("ok".utf8))
        XCTAssertFalse(keeps)
    }
}
