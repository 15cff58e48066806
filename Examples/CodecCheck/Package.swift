// swift-tools-version:6.0
import PackageDescription

// A codec's test suite checking itself against real traffic, as a package that depends on
// proto-dissect would (here by path; elsewhere by its repository's URL).
let package = Package(
    name: "CodecCheck",
    dependencies: [
        .package(name: "proto-dissect", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "CodecCheck", dependencies: [
            .product(name: "ProtoDissectKit", package: "proto-dissect"),
            .product(name: "MQTT", package: "proto-dissect"),
        ]),
    ]
)
