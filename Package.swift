// swift-tools-version:6.0
import PackageDescription

// The targets follow the data flow (see docs/architecture.md):
// Capture -> Packets -> Reassembly -> (MQTT | AMQP, over the Dissection model, shown by their views in Render)
//   -> Pipeline -> Render -> proto-dissect
// Every module of the data flow: value operations (copies and destroys of optionals, enums and
// existentials) lowered per type. Swift 6.3's default, type-layout-based lowering, makes many of
// them calls through the generic value witnesses (an optional struct holding a String: about 210
// instructions to destroy, against 10): the bench capture's AMQP part -4.6% instructions, its
// MQTT part -1.7% (docs/performance.md). SwiftPM 6.2 and later accept such flags in dependencies.
let valueLowering: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-type-layout"])]

let package = Package(
    name: "proto-dissect",
    products: [
        .executable(name: "proto-dissect", targets: ["proto-dissect"]),
        .library(name: "Dissection", targets: ["Dissection"]),
        .library(name: "MQTT", targets: ["MQTT"]),
        .library(name: "AMQP", targets: ["AMQP"]),
        .library(name: "Packets", targets: ["Packets"]),
        .library(name: "Reassembly", targets: ["Reassembly"]),
        .library(name: "Capture", targets: ["Capture"]),
        .library(name: "Render", targets: ["Render"]),
        .library(name: "MQTTViews", targets: ["MQTTViews"]),
        .library(name: "AMQPViews", targets: ["AMQPViews"]),
        .library(name: "Pipeline", targets: ["Pipeline"]),
        .library(name: "ProtoDissectKit", targets: ["ProtoDissectKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // macOS: the SDK's libpcap (the module map links "pcap"; no pkg-config needed).
        .systemLibrary(name: "CPcap", pkgConfig: "libpcap", providers: [.apt(["libpcap-dev"]), .brew(["libpcap"])]),
        // The executable's allocator on Linux (docs/performance.md); the libraries keep the
        // system's, and so does the executable elsewhere (macOS: its malloc, no mimalloc needed).
        .systemLibrary(name: "CMimalloc", providers: [.apt(["libmimalloc-dev"]), .brew(["mimalloc"])]),
        .target(name: "Capture", dependencies: ["CPcap"], swiftSettings: valueLowering),
        .target(name: "Packets", swiftSettings: valueLowering),
        .target(name: "Reassembly", dependencies: ["Packets"], swiftSettings: valueLowering),
        .target(name: "Dissection", swiftSettings: valueLowering),
        .target(name: "MQTT", dependencies: ["Dissection"], swiftSettings: valueLowering),
        .target(name: "AMQP", dependencies: ["Dissection"], swiftSettings: valueLowering),
        // Render: every output is a view of the decoders' typed values. The protocols' views (field
        // tree, summary line, what a table counts, the analyses' words) are handed to the
        // dissectors when they are made; the formats print what they make.
        .target(name: "MQTTViews", dependencies: ["MQTT", "Dissection"], path: "Sources/Render/MQTT", swiftSettings: valueLowering),
        .target(name: "AMQPViews", dependencies: ["AMQP", "Dissection", "Render"], path: "Sources/Render/AMQP", swiftSettings: valueLowering),
        .target(name: "Render", dependencies: ["Dissection"], path: "Sources/Render/Formats", swiftSettings: valueLowering),
        .target(name: "Pipeline", dependencies: ["Capture", "Packets", "Reassembly", "Dissection"], swiftSettings: valueLowering),
        // For library users: a capture opened and dissected as the command does, PDU by PDU.
        .target(name: "ProtoDissectKit", dependencies: ["Pipeline", "Capture", "Dissection", "MQTT", "AMQP", "MQTTViews", "AMQPViews"], swiftSettings: valueLowering),
        // Linux: the Swift runtime and libraries linked statically, with the archives the static
        // FoundationEssentials needs (faster start-up, less memory: docs/performance.md). Apple
        // platforms reject -static-stdlib (their Swift runtime is the system's) and have no such archives.
        .executableTarget(name: "proto-dissect", dependencies: [
            "Pipeline", "Render", "MQTT", "MQTTViews", "AMQP", "AMQPViews", "Capture", "Dissection", "ProtoDissectKit",
            .target(name: "CMimalloc", condition: .when(platforms: [.linux])),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: valueLowering, linkerSettings: [.unsafeFlags(["-static-stdlib", "-Xlinker", "-l_FoundationCShims", "-Xlinker", "-l_FoundationCollections"],
                                         .when(platforms: [.linux]))]),
        // Fuzzing (scripts/fuzz.sh): the targets' code is a library, so tests replay saved inputs;
        // each executable is libFuzzer's entry point when built with FUZZING, a replayer otherwise.
        .target(name: "FuzzTargets", dependencies: ["MQTT", "MQTTViews", "AMQP", "AMQPViews", "Pipeline", "Capture", "Reassembly", "Render", "Dissection"], path: "Fuzz/Targets"),
        .executableTarget(name: "fuzz-mqtt", dependencies: ["FuzzTargets"], path: "Fuzz/MQTT"),
        .executableTarget(name: "fuzz-amqp", dependencies: ["FuzzTargets"], path: "Fuzz/AMQP"),
        .executableTarget(name: "fuzz-views", dependencies: ["FuzzTargets"], path: "Fuzz/Views"),
        .executableTarget(name: "fuzz-pipeline", dependencies: ["FuzzTargets"], path: "Fuzz/Pipeline"),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture"]),
        .testTarget(name: "PacketsTests", dependencies: ["Packets"]),
        .testTarget(name: "ReassemblyTests", dependencies: ["Reassembly", "Packets", "TestSupport"]),
        // What several test targets share (a seeded random generator, feeding a dissector in parts).
        .target(name: "TestSupport", dependencies: ["Dissection"], path: "Tests/TestSupport"),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "MQTTViews", "Dissection", "TestSupport"]),
        .testTarget(name: "AMQPTests", dependencies: ["AMQP", "AMQPViews", "Dissection", "Render", "TestSupport"]),
        .testTarget(name: "RenderTests", dependencies: ["Render", "Dissection", "TestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["Pipeline", "Render", "MQTT", "MQTTViews", "AMQP", "AMQPViews", "Capture", "Dissection", "TestSupport",
                                                          "ProtoDissectKit"]),
    ],
    swiftLanguageModes: [.v6]
)
