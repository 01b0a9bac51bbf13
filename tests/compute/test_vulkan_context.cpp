// The Vulkan runtime below the kernels: device enumeration and choice, buffers, the
// validation log (which must really count errors), the bounded fence wait, and the
// dispatch-floor and read-bandwidth probes that `bench` builds its roofline from.
#include "compute/engine/Kernels.hpp"
#include "compute/vulkan/BandwidthProbe.hpp"
#include "compute/vulkan/DispatchProbe.hpp"
#include "compute/vulkan/SpinBarrierProbe.hpp"

#include <QtTest>

#include <cmath>
#include <cstdlib>

using namespace inferscope::compute;

class VulkanContextTest : public QObject {
    Q_OBJECT

private slots:
    void listsDevicesWithTheirProperties() {
        const auto devices = listDevices();
        QVERIFY(!devices.empty());
        for (const auto& d : devices) {
            qInfo("device %u: %s (%s), Vulkan %s, subgroup %u, shared %u B, fp16 %d, int8 %d, "
                  "int dot %d, coop matrix %d, budget %d",
                  d.index, d.name.c_str(), d.type.c_str(), apiVersionString(d.apiVersion).c_str(),
                  d.subgroupSize, d.maxSharedMemoryBytes, d.shaderFloat16, d.shaderInt8,
                  d.integerDotProduct, d.cooperativeMatrix, d.memoryBudget);
            QVERIFY(!d.name.empty());
            QVERIFY(!d.heaps.empty());
            QVERIFY(d.maxStorageBufferRange > 0);
        }
    }

    void choosesByIndexAndRejectsUnknownIndices() {
        VulkanContext first({.deviceIndex = 0u, .validation = false});
        QCOMPARE(first.info().index, 0u);
        QVERIFY(first.info().storage16Bit);
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 VulkanContext({.deviceIndex = 1000u, .validation = false}));
        qputenv("INFERSCOPE_DEVICE", "999");
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 VulkanContext({.deviceIndex = std::nullopt, .validation = false}));
        qunsetenv("INFERSCOPE_DEVICE");
    }

    void buffersRoundTripAndCountMemory() {
        VulkanContext context;
        const auto before = context.allocatedBytes();
        {
            std::vector<float> values(1000);
            for (std::size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 0.5f;
            Buffer device(context, values.size() * 4, BufferKind::DeviceLocal, "device");
            device.upload(std::span<const float>(values));
            QCOMPARE(device.read<float>(values.size()), values);
            Buffer readback(context, 64, BufferKind::Readback, "readback");
            QVERIFY(readback.mapped());
            QVERIFY(context.allocatedBytes() >= before + values.size() * 4 + 64);
            QVERIFY_THROWS_EXCEPTION(ComputeError, device.upload(values.data(), 8, 3999));
        }
        QCOMPARE(context.allocatedBytes(), before);
        QVERIFY(context.peakAllocatedBytes() >= before + 4000);
        const auto tooBig = context.info().maxStorageBufferRange + 1;
        QVERIFY_THROWS_EXCEPTION(ComputeError,
                                 Buffer(context, tooBig, BufferKind::DeviceLocal, "too big"));
        QCOMPARE(context.validationLog().errors(), 0u);
    }

    void validationLogCountsRealErrors() {
        if (!std::getenv("INFERSCOPE_VALIDATION")) QSKIP("runs with INFERSCOPE_VALIDATION=1");
        VulkanContext context;
        QVERIFY(context.validationEnabled());
        QCOMPARE(context.validationLog().errors(), 0u);
        // A deliberate misuse: a buffer of size 0 is invalid usage the layer reports.
        VkBufferCreateInfo info{};
        info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
        info.size = 0;
        info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
        VkBuffer buffer = VK_NULL_HANDLE;
        const auto createBuffer = reinterpret_cast<PFN_vkCreateBuffer>(
            vkGetDeviceProcAddr(*context.device(), "vkCreateBuffer"));
        if (createBuffer(*context.device(), &info, nullptr, &buffer) == VK_SUCCESS && buffer) {
            vkDestroyBuffer(*context.device(), buffer, nullptr);
        }
        QVERIFY(context.validationLog().errors() >= 1);
        QVERIFY(!context.validationLog().messages().empty());
    }

    void fenceWaitIsBounded() {
        VulkanContext context;
        Kernels kernels(context);
        CommandRecorder recorder(context);
        // Enough work that 1 ns cannot suffice.
        const std::uint32_t rows = 4096, cols = 1024;
        std::vector<float> weights(std::size_t(rows) * cols, 0.25f);
        auto matrix = uploadMatrix(context, weights, rows, cols, WeightFormat::F32, "W");
        Buffer x(context, cols * 4 * 64, BufferKind::DeviceLocal, "x");
        x.fillZero();
        Buffer y(context, rows * 4 * 64, BufferKind::DeviceLocal, "y");
        MatvecArgs args;
        args.weights = &matrix;
        args.input = &x;
        args.inputStride = cols;
        args.output = &y;
        args.outputStride = rows;
        args.tokens = 64;
        recorder.begin();
        for (int i = 0; i < 8; ++i) kernels.matvec(recorder, args, "busy");
        bool timedOut = false;
        try {
            recorder.submitAndWait(1);
        } catch (const ComputeError& e) {
            timedOut = QString(e.what()).contains("did not finish");
        }
        context.device().waitIdle();
        QVERIFY(timedOut);
        // The recorder is usable again afterwards.
        recorder.begin();
        kernels.matvec(recorder, args, "again");
        recorder.submitAndWait();
        QCOMPARE(context.validationLog().errors(), 0u);
    }

    // The floor is per dispatch of the timed run: twice the dispatches take longer in all
    // (best of several runs each), and the figure is that run's time over its dispatches.
    void dispatchFloorIsPerDispatch() {
        VulkanContext context;
        const auto few = measureDispatchFloor(context, 32, 3);
        const auto many = measureDispatchFloor(context, 512, 3);
        QCOMPARE(few.dispatches, 32u);
        QCOMPARE(many.dispatches, 512u);
        QVERIFY(few.seconds > 0 && std::isfinite(few.seconds));
        QVERIFY(many.seconds > few.seconds);
        QCOMPARE(many.microsecondsPerDispatch, many.seconds / 512 * 1e6);
        QVERIFY(many.microsecondsPerDispatch < 10'000); // a dispatch is not 10 ms
        qInfo("dispatch floor: %.1f us (32 dispatches), %.1f us (512)", few.microsecondsPerDispatch,
              many.microsecondsPerDispatch);
        QCOMPARE(context.validationLog().errors(), 0u);
    }

    // A wait between phases inside one dispatch is a figure only where the two workgroups ran
    // at the same time: with lavapipe's pool off (LP_NUM_THREADS=0, read when the driver's
    // device is created) they run one after the other, every wait of the first runs out, and
    // the probe says so instead of timing the waits that ran out.
    void spinBarrierNeedsWorkgroupsRunningTogether() {
        {
            VulkanContext context;
            const auto spin = measureSpinBarrier(context, 600, 2);
            QCOMPARE(spin.phases, 600u);
            QCOMPARE(spin.workgroups, 2u);
            if (spin.measured) {
                QVERIFY(spin.reason.empty());
                QVERIFY(std::isfinite(spin.microsecondsPerPhase) && spin.microsecondsPerPhase >= 0);
                qInfo("wait inside one dispatch: %.3f us per phase", spin.microsecondsPerPhase);
            }
            QCOMPARE(context.validationLog().errors(), 0u);
        }
        if (QString::fromStdString(VulkanContext().info().type) != "cpu")
            QSKIP("the inline path is lavapipe's");
        const QByteArray saved = qgetenv("LP_NUM_THREADS");
        const bool had = qEnvironmentVariableIsSet("LP_NUM_THREADS");
        qputenv("LP_NUM_THREADS", "0");
        {
            VulkanContext inlineContext;
            const auto spin = measureSpinBarrier(inlineContext, 600, 2);
            QVERIFY(!spin.measured);
            QCOMPARE(spin.microsecondsPerPhase, 0.0);
            QVERIFY2(QString::fromStdString(spin.reason).contains("did not run at the same time"),
                     spin.reason.c_str());
            QCOMPARE(inlineContext.validationLog().errors(), 0u);
        }
        if (had)
            qputenv("LP_NUM_THREADS", saved);
        else
            qunsetenv("LP_NUM_THREADS");
    }

    // The bandwidth is the fastest pass over every size, each size read several times; the
    // slowest pass and the method are kept so a table can say how steady the machine was.
    void readBandwidthIsTheFastestPassOverEverySize() {
        VulkanContext context;
        const std::vector<std::uint64_t> sizes{8ull << 20, 16ull << 20, 16ull << 20};
        const auto measured = measureReadBandwidth(context, sizes, 3);
        QCOMPARE(measured.sizes, (std::vector<std::uint64_t>{8ull << 20, 16ull << 20}));
        QCOMPARE(measured.passesPerSize, 3);
        QVERIFY(measured.bytes == (8ull << 20) || measured.bytes == (16ull << 20));
        QVERIFY(measured.seconds > 0 && std::isfinite(measured.seconds));
        QCOMPARE(measured.gigabytesPerSecond, double(measured.bytes) / measured.seconds / 1e9);
        QVERIFY(measured.slowestGigabytesPerSecond > 0);
        QVERIFY(measured.slowestGigabytesPerSecond <= measured.gigabytesPerSecond);
        const std::string method = measured.method();
        QVERIFY2(method.find("fastest of 3 passes over each of 8 MiB and 16 MiB") == 0,
                 method.c_str());
        qInfo("%.1f GB/s: %s", measured.gigabytesPerSecond, method.c_str());
        QCOMPARE(context.validationLog().errors(), 0u);
    }
};

QTEST_APPLESS_MAIN(VulkanContextTest)
#include "test_vulkan_context.moc"
