internal import CMeasurementAtomics

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
/// filter decisions. Reached through one thread-local slot, so a post touches no state that
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

    // Unchecked: only this thread reads or writes them; the dynamic exclusivity check cost
    // about as much as the rest of the lookup.
    @exclusivity(unchecked) private var slots: [Slot] = []
    /// Held by `slots`; unowned(unsafe) so that the lookup costs no reference counting.
    @exclusivity(unchecked) private unowned(unsafe) var lastUsed: Slot?

    /// The ``PostInProgress`` that `MeasurementEvent.post` is making on this thread, if any.
    @exclusivity(unchecked) var postInProgress: UnsafeRawPointer?

    /// Only for its destructor, which runs when a thread exits: its buffers will get no more
    /// items, and the drain drops them once it has emptied them. Reads go through a C11
    /// thread-local (`me_posting_thread`), which costs a few instructions.
    private static let exitKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { raw in
            // Cleared first: another key's destructor may still post on this thread, and must
            // then find no object rather than this freed one.
            me_posting_thread_set(nil)
            #if canImport(Darwin)
                Unmanaged<PostingThread>.fromOpaque(raw).release()
            #else
                if let raw { Unmanaged<PostingThread>.fromOpaque(raw).release() }
            #endif
        }
        return key
    }()

    deinit {
        for slot in slots { slot.buffer.markThreadExited() }
    }

    /// Runs `body` with this thread's object, made on its first post.
    @inline(__always)
    static func withCurrent<Result>(_ body: (PostingThread) -> Result) -> Result {
        current._withUnsafeGuaranteedRef(body)
    }

    /// This thread's object, made on its first post; the thread keeps it alive.
    @inline(__always)
    static var current: Unmanaged<PostingThread> {
        if let raw = me_posting_thread_get() { return Unmanaged<PostingThread>.fromOpaque(raw) }
        return makeCurrent()
    }

    @inline(never)
    private static func makeCurrent() -> Unmanaged<PostingThread> {
        let thread = Unmanaged.passRetained(PostingThread())
        pthread_setspecific(exitKey, thread.toOpaque())
        me_posting_thread_set(thread.toOpaque())
        return thread
    }

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
