import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsHTTP

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

#if os(macOS) || os(Linux)
    /// An app launched before the device's first unlock, played with real files: a child process
    /// (`locked-launch-child`) runs as a user other than root (`setpriv` to `nobody` when the
    /// tests run as root, where modes stop nothing) on an identity store and an HTTP queue whose
    /// files it may not open (mode 000, as class-C files are before the first unlock). Mid-run the
    /// files become readable and the child hears UIKit's protected-data notification.
    ///
    /// What must hold: the stored anonymous id, salt and session before and after; no
    /// `app/installed`; every event posted (and the one a previous run queued) delivered.
    final class LockedLaunchTests: LoopbackTestCase {
        private static let nobody: uid_t = 65_534

        private var childURL: URL { builtExecutable("locked-launch-child") }

        func testALaunchBeforeTheFirstUnlockKeepsTheInstallsIdentityAndLosesNothing() throws {
            guard FileManager.default.isExecutableFile(atPath: childURL.path) else {
                throw XCTSkip("locked-launch-child not found at \(childURL.path); run `swift build --build-tests`")
            }
            let isRoot = getuid() == 0
            if isRoot, !FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
                // util-linux is essential on Debian; say so rather than pass without running.
                return XCTFail("running as root needs /usr/bin/setpriv to run the child as another user")
            }
            let storeDirectory = directory.appendingPathComponent("store")
            let trackerDirectory = directory.appendingPathComponent("segment")
            let session = Session(id: 42, startedAt: Date(), lastActivityAt: Date())
            let stored = IdentityStoreContents(
                identity: EventIdentity(anonymousID: "anon-installed"), consent: .granted, session: session,
                appVersion: "1.0", appBuild: "1", personalDataSalt: String(repeating: "5a", count: 32))
            do {
                // The previous launch: the store written, one event left in the queue.
                try FileIdentityStore(directory: storeDirectory).save(stored)
                var configuration = HTTPTracker.Configuration()
                configuration.flushPolicies = [ManualFlushPolicy()]
                configuration.logHandler = { _ in }
                let previous = try HTTPTracker(
                    encoder: SegmentEncoder(writeKey: "locked-launch", baseURL: collector.baseURL),
                    directory: trackerDirectory, configuration: configuration)
                // Written with one write(2), not sent: the manual policy uploads only when asked.
                try previous.track(MeasurementEvent("locked/previous_run"))
            }
            let identityFile = storeDirectory.appendingPathComponent("identity.json")
            let storedBytes = try Data(contentsOf: identityFile)
            if isRoot { try chown(directory, to: Self.nobody) }
            // Locked: neither store may be opened (the lock files and the file too).
            try setMode(
                0, of: [identityFile, storeDirectory.appendingPathComponent("identity.lock"), trackerDirectory])

            let child = Process()
            child.executableURL = URL(fileURLWithPath: isRoot ? "/usr/bin/setpriv" : childURL.path)
            let childArguments = [storeDirectory.path, trackerDirectory.path, collector.baseURL.absoluteString]
            child.arguments =
                isRoot
                ? ["--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", "--", childURL.path]
                    + childArguments : childArguments
            let input = Pipe()
            let output = Pipe()
            child.standardInput = input
            child.standardOutput = output
            try child.run()
            let lines = LineReader(output.fileHandleForReading)

            let locked = try XCTUnwrap(lines.report("locked"), "the child's first report")
            XCTAssertEqual(locked["heldUntilStoreReadable"] as? Int, 5, "\(locked)")
            XCTAssertEqual(locked["forwarded"] as? Int, 0, "nothing stamped with an identity not read")
            XCTAssertEqual(locked["consent"] as? String, "pendingHolding")
            let lockedProblems = locked["problems"] as? [String] ?? []
            XCTAssertTrue(lockedProblems.contains { $0.contains("cannot be read yet") }, "\(lockedProblems)")
            XCTAssertFalse(lockedProblems.contains { $0.contains("new anonymous id") }, "\(lockedProblems)")

            // Unlocked: the files may be opened again, unchanged.
            try setMode(0o600, of: [identityFile, storeDirectory.appendingPathComponent("identity.lock")])
            try setMode(0o700, of: [trackerDirectory])
            XCTAssertEqual(try Data(contentsOf: identityFile), storedBytes, "nothing was written while locked")
            input.fileHandleForWriting.write(Data("unlocked\n".utf8))
            let done = try XCTUnwrap(lines.report("done"), "the child's second report")
            child.waitUntilExit()
            XCTAssertEqual(child.terminationStatus, 0)

            XCTAssertEqual(done["anonymousID"] as? String, "anon-installed", "\(done)")
            XCTAssertEqual(done["sessionID"] as? String, "42", "the stored session goes on")
            XCTAssertEqual(done["release"] as? String, "unchanged", "no false install")
            XCTAssertEqual(done["consent"] as? String, "granted", "the stored consent")
            XCTAssertEqual(done["forwarded"] as? Int, 10)
            XCTAssertEqual(done["dropped"] as? Int, 0)
            XCTAssertEqual(done["delivered"] as? Bool, true)
            XCTAssertEqual(done["trackerDelivered"] as? Int, 11, "ten of this launch and the previous run's")

            let after = try XCTUnwrap(try FileIdentityStore(directory: storeDirectory).load())
            XCTAssertEqual(after.identity.anonymousID, "anon-installed")
            XCTAssertEqual(after.personalDataSalt, stored.personalDataSalt, "the same salt")
            XCTAssertEqual(after.session?.id, 42)
            XCTAssertFalse(
                FileManager.default.fileExists(atPath: identityFile.path + ".corrupt"), "nothing taken for damage")

            let batches = collector.requests.map { try? JSONSerialization.jsonObject(with: Data($0.body)) }
            let sent = batches.compactMap { ($0 as? [String: Any])?["batch"] as? [[String: Any]] }.joined()
            let names = sent.compactMap { $0["event"] as? String }
            XCTAssertEqual(names.filter { $0 == "locked/event" }.count, 10)
            XCTAssertEqual(names.filter { $0 == "locked/previous_run" }.count, 1)
            XCTAssertFalse(names.contains("app/installed"), "\(names)")
            XCTAssertEqual(
                Set(
                    sent.filter { $0["event"] as? String == "locked/event" }.compactMap { $0["anonymousId"] as? String }
                ),
                ["anon-installed"])
            print("locked launch:", locked)
            print("after unlock:", done)
        }

        private func setMode(_ mode: mode_t, of urls: [URL]) throws {
            for url in urls where chmod(url.path, mode) != 0 {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }

        /// Gives `root` and everything under it to `user`.
        private func chown(_ root: URL, to user: uid_t) throws {
            let paths =
                [root.path]
                + (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? [])
                .map { root.appendingPathComponent($0).path }
            for path in paths where lchown(path, user, gid_t(user)) != 0 {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }

    /// Reads the child's `label {json}` lines.
    private final class LineReader {
        private let handle: FileHandle
        private var buffer = Data()

        init(_ handle: FileHandle) { self.handle = handle }

        /// The JSON of the next line that starts with `label`; nil at the end of the output.
        func report(_ label: String) -> [String: Any]? {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    guard line.hasPrefix(label + " ") else { continue }
                    let json = Data(line.dropFirst(label.count + 1).utf8)
                    return try? JSONSerialization.jsonObject(with: json) as? [String: Any]
                }
                let chunk = handle.availableData
                if chunk.isEmpty { return nil }
                buffer.append(chunk)
            }
        }
    }
#endif
