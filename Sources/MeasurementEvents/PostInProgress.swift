import Foundation

/// The typed fields of the post that ``MeasurementEvent/post(_:type:category:args:to:file:line:)`` is
/// making on this thread right now.
///
/// Reading a name back out of a `[AnyHashable: Any]` userInfo costs more on Linux than the
/// whole notification post, and block observers run synchronously on the posting thread. So
/// the poster leaves a pointer to its fields in its ``PostingThread`` for the duration of the
/// post, and an aggregator's observer uses them instead of decoding the userInfo — but only
/// after checking that the notification carries the very userInfo dictionary this post made.
/// Any other notification (another poster, a re-post, a nested raw post) is decoded as usual.
struct PostInProgress {
    // Pointers into the poster's frame, valid for the duration of the post: holding the
    // values themselves would retain and release each of them on every post.
    let name: UnsafePointer<EventName>
    let type: EventType
    let category: UnsafePointer<String?>
    let args: UnsafePointer<[String: any EventValueConvertible]>
    /// The posted userInfo dictionary's storage address.
    let userInfoIdentity: UInt

    /// The identity of a dictionary's storage, or nil where Dictionary is not one word.
    @inline(__always)
    static func identity(of userInfo: [AnyHashable: Any]) -> UInt? {
        guard MemoryLayout<[AnyHashable: Any]>.size == MemoryLayout<UInt>.size else { return nil }
        return unsafeBitCast(userInfo, to: UInt.self)
    }

    /// Runs `post` with `self` visible to observers on this thread; restores whatever an outer
    /// post had left, so nested posts work.
    @inline(__always)
    func publish(during post: () -> Void) {
        PostingThread.withCurrent { thread in
            let outer = thread.postInProgress
            withUnsafePointer(to: self) { pointer in
                thread.postInProgress = UnsafeRawPointer(pointer)
                post()
            }
            thread.postInProgress = outer
        }
    }

    /// The fields of the post in progress on this thread, if `notification` is that post; valid
    /// only while the observer runs (the pointee lives in the poster's stack frame). A pointer,
    /// not a copy: copying the fields would retain and release each of them.
    @inline(__always)
    static func current(for notification: Notification) -> UnsafePointer<PostInProgress>? {
        guard let raw = PostingThread.withCurrent({ $0.postInProgress }) else { return nil }
        let post = raw.assumingMemoryBound(to: PostInProgress.self)
        // The dictionary's identity without binding a copy of it (a retain and a release).
        guard notification.userInfo.map({ identity(of: $0) }) == post.pointee.userInfoIdentity else { return nil }
        return post
    }
}
