/// The version of the MeasurementEvents package, declared once: the context's
/// ``EventContext/Library`` and every encoder send it.
///
/// The package follows [semantic versioning](https://semver.org): a release that removes or
/// changes public API in an incompatible way has a new major version; see the README's
/// installation section for what counts as public API.
public enum PackageVersion {
    /// The version of this release: `"3.0.0"`.
    public static let current = "3.0.0"
}
