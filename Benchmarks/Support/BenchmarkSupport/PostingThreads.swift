import Foundation

/// Threads that stay alive across iterations, so that a multi-threaded benchmark measures
/// posting rather than thread creation.
public final class PostingThreads: @unchecked Sendable {
    // @unchecked: `work` is set before the threads are released by `start` and read only
    // after they are; `done` orders the end of each round.
    private let starts: [DispatchSemaphore]
    private let done = DispatchGroup()
    private var work: (@Sendable (Int) -> Void)?
    private var stopping = false

    public let count: Int

    public init(count: Int) {
        self.count = count
        starts = (0..<count).map { _ in DispatchSemaphore(value: 0) }
        for index in 0..<count {
            let thread = Thread { [self] in
                while true {
                    starts[index].wait()
                    if stopping { return }
                    work?(index)
                    done.leave()
                }
            }
            thread.start()
        }
    }

    /// Runs `work(threadIndex)` on every thread at once and returns when all are done.
    public func run(_ work: @escaping @Sendable (Int) -> Void) {
        self.work = work
        for start in starts {
            done.enter()
            start.signal()
        }
        done.wait()
    }

    /// Lets the threads end.
    public func stop() {
        stopping = true
        for start in starts { start.signal() }
    }
}
