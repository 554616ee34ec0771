import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#endif

/// What a posting thread keeps for each aggregator it posts to: its buffer and its cache of
/// filter decisions. Reached through one thread-specific slot, so a post touches no state that
/// another thread writes (except the buffer's lock while the drain swaps it).
final class PostingThread {
    // Not Sendable: used by its own thread only (and released by the thread-exit destructor).
    final class Slot {
        /// ``EventAggregator``'s serial number: never reused, unlike an object's address.
        let aggregatorSerial: Int64
        let buffer: PostingBuffer
        let decisions = NameDecisionCache()

        init(aggregatorSerial: Int64, buffer: PostingBuffer) {
            self.aggregatorSerial = aggregatorSerial
            self.buffer = buffer
        }
    }

    private var slots: [Slot] = []
    /// The slot of the aggregator this thread posted to last (also in `slots`).
    private var lastUsed: Slot?
    /// What `MeasurementEvent.post` is posting on this thread, if anything (see
    /// ``publish(_:userInfo:)``, in `Posting.swift`).
    var published = Published()

    /// A post in progress: its record, in the poster's frame, and the identity of the userInfo
    /// it posts; nil and 0 while no post is in progress.
    struct Published {
        var record: UnsafePointer<PostedEvent>?
        var userInfo: UInt = 0
    }

    /// The thread-specific key that holds each thread's object. Its destructor runs when a
    /// thread exits: the thread's buffers will get no more items, and the drain drops them
    /// once it has emptied them.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            // Invariant: the key holds one retain of a PostingThread (made in `makeCurrent`),
            // given up here, once, when the thread exits. (The parameter is optional on Linux.)
            let raw: UnsafeMutableRawPointer? = raw
            if let raw { Unmanaged<PostingThread>.fromOpaque(raw).release() }
        }
        return key
    }()

    deinit {
        for slot in slots { slot.buffer.markThreadExited() }
    }

    /// This thread's object, made on its first post; the thread keeps it alive until it exits.
    @inline(__always)
    static var current: PostingThread {
        // Invariant: the key's value is nil or a PostingThread the key retains (see `key`).
        if let raw = pthread_getspecific(key) { return Unmanaged<PostingThread>.fromOpaque(raw).takeUnretainedValue() }
        return makeCurrent()
    }

    @inline(never)
    private static func makeCurrent() -> PostingThread {
        let thread = PostingThread()
        pthread_setspecific(key, Unmanaged.passRetained(thread).toOpaque())
        return thread
    }

    // MARK: Slots

    /// The slot for the aggregator numbered `serial`; `register` is called with a new buffer
    /// the first time this thread posts to it.
    @inline(__always)
    func slot(for serial: Int64, register: (PostingBuffer) -> Void) -> Slot {
        if let slot = lastUsed, slot.aggregatorSerial == serial { return slot }
        return findSlot(for: serial, register: register)
    }

    private func findSlot(for serial: Int64, register: (PostingBuffer) -> Void) -> Slot {
        if let slot = slots.first(where: { $0.aggregatorSerial == serial }) {
            lastUsed = slot
            return slot
        }
        // Rare (a new aggregator): forget the slots of aggregators that are gone. They are
        // released at the end, once `slots` and `lastUsed` are consistent: releasing one may
        // run a deinitialiser that posts on this thread.
        let gone = slots.filter { $0.buffer.isAggregatorGone }
        if !gone.isEmpty {
            lastUsed = nil
            // By identity: an aggregator that goes meanwhile must not lose its slot's last
            // reference inside the removal.
            slots.removeAll { slot in gone.contains { $0 === slot } }
        }
        let slot = Slot(aggregatorSerial: serial, buffer: PostingBuffer())
        register(slot.buffer)
        slots.append(slot)
        lastUsed = slot
        withExtendedLifetime(gone) {}
        return slot
    }
}

extension PostingThread {
    /// Publishes `record` to the observers that run on this thread until ``restore(_:)``, so
    /// that they need not decode the userInfo they receive; returns what an outer post had
    /// published (nested posts work).
    ///
    /// By pointer, into the poster's frame: keeping a copy of the record in the thread object
    /// cost about 1,000 instructions a post (10% of a filtered-out post) in copies and releases.
    /// Invariant: the poster calls ``restore(_:)`` before `record` goes out of scope (in the
    /// `withUnsafePointer` block that made it), so the pointer is valid while it is published.
    @inline(__always)
    func publish(_ record: UnsafePointer<PostedEvent>, userInfo: UInt) -> Published {
        defer { published = Published(record: record, userInfo: userInfo) }
        return published
    }

    /// Publishes again what ``publish(_:userInfo:)`` returned.
    @inline(__always)
    func restore(_ outer: Published) {
        published = outer
    }

    /// The record published by the post in progress on this thread, if `notification` carries
    /// the very userInfo that post is posting; otherwise nil, and the caller decodes the
    /// notification, which gives the same record. Valid only while the observer runs; read in
    /// place (a copy retains and releases every field).
    ///
    /// Invariant: the poster holds its userInfo until `post` returns, so while it is published
    /// no other dictionary storage can have its identity; a dictionary with the same identity
    /// shares its storage, hence its contents. A copy of the userInfo (same storage) matches; one
    /// bridged to or from `NSDictionary`, or rebuilt, does not, and is decoded.
    @inline(__always)
    func publishedRecord(carrying notification: borrowing Notification) -> UnsafePointer<PostedEvent>? {
        guard let record = published.record else { return nil }
        // The identity without binding a copy of the dictionary (a retain and a release).
        guard notification.userInfo.map({ Self.identity(of: $0) }) == published.userInfo else { return nil }
        return record
    }

    /// The identity of a dictionary's storage (its one word), or nil on a platform
    /// where a Dictionary is not one word: then nothing is published and every post is decoded.
    /// Only compared, never read through.
    @inline(__always)
    static func identity(of userInfo: [AnyHashable: Any]) -> UInt? {
        guard MemoryLayout<[AnyHashable: Any]>.size == MemoryLayout<UInt>.size else { return nil }
        return unsafeBitCast(userInfo, to: UInt.self)
    }
}
