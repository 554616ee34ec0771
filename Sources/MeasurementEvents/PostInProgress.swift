import Foundation

/// The typed fields of the post that ``MeasurementEvent/post(_:type:category:args:to:file:line:)`` is
/// making on this thread right now.
///
/// Reading a name back out of a `[AnyHashable: Any]` userInfo costs a third of the whole post
/// on Linux, and block observers run synchronously on the posting thread. So the poster leaves
/// its fields in its ``PostingThread`` for the duration of the post, and an aggregator's
/// observer uses them instead of decoding the userInfo, for the notification that carries the
/// posted dictionary only. Any other notification (another poster, a re-post, a nested raw
/// post, a userInfo copied into a new dictionary or bridged to an `NSDictionary` that Swift does
/// not unwrap back to the same storage) is decoded as usual, which gives the same fields.
struct PostInProgress {
    let name: EventName
    let type: EventType
    let category: String?
    let args: [String: any EventValueConvertible]
    /// The posted userInfo dictionary's storage.
    let userInfoIdentity: UInt

    /// The identity of a dictionary's storage, or nil where Dictionary is not one word.
    ///
    /// Invariant: a Dictionary value is one reference to its storage (native or Cocoa), and the
    /// poster holds the posted dictionary until `post` returns; so during the post, a dictionary
    /// with the same word shares its storage, and its contents. Only equality is used: nothing
    /// is read through the word.
    @inline(__always)
    static func identity(of userInfo: [AnyHashable: Any]) -> UInt? {
        guard MemoryLayout<[AnyHashable: Any]>.size == MemoryLayout<UInt>.size else { return nil }
        return unsafeBitCast(userInfo, to: UInt.self)
    }

    /// Runs `post` with `self` visible to observers on this thread; restores whatever an outer
    /// post had left, so nested posts work.
    @inline(__always)
    func publish(during post: () -> Void) {
        let thread = PostingThread.current
        let outer = thread.postInProgress
        // Invariant: the pointer is valid while `post` runs, and cleared (to the outer post's,
        // itself still valid) before this frame ends.
        withUnsafePointer(to: self) {
            thread.postInProgress = UnsafeRawPointer($0); post()
        }
        thread.postInProgress = outer
    }

    /// The post in progress on this thread, if `notification` carries its userInfo; valid only
    /// while the observer runs. Read in place: a copy would retain and release each field.
    @inline(__always)
    static func current(for notification: Notification, on thread: PostingThread) -> UnsafePointer<PostInProgress>? {
        // Invariant: `postInProgress` only ever points to a live PostInProgress (see `publish`).
        guard let post = thread.postInProgress?.assumingMemoryBound(to: PostInProgress.self) else { return nil }
        // The dictionary's identity without binding a copy of it (a retain and a release).
        guard notification.userInfo.map({ identity(of: $0) }) == post.pointee.userInfoIdentity else { return nil }
        return post
    }
}
