import { expect, it } from "vitest"
import type { Gpu } from "../../src/domain/Gpu.ts"
import type { NodeReading } from "../../src/domain/NodeReading.ts"
import { parseNvsmiOutput } from "../../src/nvsmi/NvsmiOutput.ts"
import { parseXmlReading, XmlReadingParser } from "../../src/nvsmi/XmlReadingParser.ts"
import { describeWithFixtures, readFixture } from "../support/fixtures.ts"
import { readingFrom } from "./ReadingAssertions.ts"

const reading = (fields: Omit<NodeReading, "failures" | "format">): NodeReading => ({
  ...fields,
  failures: [],
  format: "xml",
})

const gb200 = (
  index: number,
  uuid: string,
  serial: string,
  bus: string,
  moduleId: number,
  fabricGuid: string,
): Gpu => ({
  index,
  uuid,
  serial,
  product: "NVIDIA GB200",
  pciBusId: `00000000:${bus}:00.0`,
  moduleId,
  migMode: "Disabled",
  platform: {
    chassisSerial: "1821225190819",
    slotNumber: "15",
    trayIndex: "5",
    hostId: "1",
    peerType: "Switch Connected",
    fabricGuid,
  },
})

const h100 = (index: number, uuid: string, serial: string, bus: string, moduleId: number): Gpu => ({
  index,
  uuid,
  serial,
  product: "NVIDIA H100 80GB HBM3",
  pciBusId: `00000000:${bus}:00.0`,
  moduleId,
  migMode: "Disabled",
})

const k80 = (index: number, uuid: string, serial: string, pciBusId: string): Gpu => ({
  index,
  uuid,
  serial,
  product: "Tesla K80",
  pciBusId,
})

/** Expected readings, value by value as the files print them (`grep -n` on each fixture). */
const expectedReadings: ReadonlyArray<readonly [string, NodeReading]> = [
  [
    "gb200-x4-driver570-v12-real-serials-crlf-gpuid.xml",
    reading({
      gpus: [
        gb200(0, "GPU-25e04bdf-6a27-0a2d-f989-a9228a03f373", "1761025346615", "29", 2, "0x983400ac35e1fa7e"),
        gb200(1, "GPU-a0540bed-7ada-8445-a50e-8811bc9ef560", "1761025346615", "3F", 1, "0x46fb28395522cf24"),
        gb200(2, "GPU-fd2305c8-7ae5-7af1-2ad2-1802dd096c17", "1761125340953", "9C", 4, "0x793ed329a617f090"),
        gb200(3, "GPU-aa321f5a-5f63-3b42-4217-073fe0b64e2c", "1761125340953", "B2", 3, "0xe14ba968d652d578"),
      ],
      driverVersion: "570.148.08",
      cudaVersion: "12.8",
      attachedGpus: 4,
    }),
  ],
  [
    "h100-80gb-hbm3-x8-driver570-v12-real-serials-gpuid.xml",
    reading({
      gpus: [
        h100(0, "GPU-ab6ab95d-8259-5551-5962-e4a7a710fbae", "1652923034028", "04", 4),
        h100(1, "GPU-7b151767-dab0-1c03-7c90-5231f72b47b2", "1652923034291", "05", 2),
        h100(2, "GPU-31e3f3fc-c0cc-bb2b-b64e-222e8a074060", "1653023018213", "0B", 1),
        h100(3, "GPU-14215778-821b-2141-eccb-52d17d198b55", "1652823054567", "0C", 3),
        h100(4, "GPU-0c1fde1d-2a6c-2d75-e4e5-ed9f66ddbd59", "1652823055642", "84", 8),
        h100(5, "GPU-bb684ffb-2cc4-6de1-3d2a-3700e95c9d72", "1652823055931", "85", 6),
        h100(6, "GPU-5659da47-75b4-84a6-2440-f588bbdce2fc", "1652823055647", "8B", 5),
        h100(7, "GPU-7b2a395e-870d-603f-6111-c42a3f798fe9", "1652923033989", "8C", 7),
      ],
      driverVersion: "570.86.15",
      cudaVersion: "12.8",
      attachedGpus: 8,
    }),
  ],
  [
    "a100-sxm4-80gb-mig-driver535-v12-telegraf.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-513536b6-7d19-9063-b049-1e69664bb298",
          serial: "1650522003820",
          product: "NVIDIA A100-SXM4-80GB",
          pciBusId: "00000000:01:00.0",
          moduleId: 4,
          migMode: "Enabled",
        },
      ],
      driverVersion: "535.54.03",
      cudaVersion: "12.2",
      attachedGpus: 4,
    }),
  ],
  [
    "a100-sxm4-40gb-mig-driver510-v11-netdata.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-27b94a00-ed54-5c24-b1fd-1054085de32a",
          serial: "1324321002473",
          product: "NVIDIA A100-SXM4-40GB",
          pciBusId: "00000000:00:04.0",
          moduleId: 3,
          migMode: "Enabled",
        },
      ],
      driverVersion: "510.47.03",
      cudaVersion: "11.6",
      attachedGpus: 1,
    }),
  ],
  [
    "gt1030-driver470-v11-serial-na-telegraf.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-857c6374-f681-cf3a-f99f-9063a87b8ac0",
          product: "NVIDIA GeForce GT 1030",
          pciBusId: "00000000:2D:00.0",
          moduleId: 0,
        },
      ],
      driverVersion: "470.74",
      cudaVersion: "11.4",
      attachedGpus: 1,
    }),
  ],
  [
    "gtx1660ti-driver418-no-doctype-telegraf.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-304a277d-3545-63b8-3a36-dfde3c992989",
          product: "Graphics Device",
          pciBusId: "00000000:43:00.0",
        },
      ],
      driverVersion: "418.43",
      cudaVersion: "10.1",
      attachedGpus: 1,
    }),
  ],
  [
    "l40s-x1-driver595-aws-g6e.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-00000000-0000-0000-0000-000000000000",
          serial: "1650000000001",
          product: "NVIDIA L40S",
          pciBusId: "00000000:30:00.0",
          moduleId: 1,
        },
      ],
      driverVersion: "595.91.07",
      cudaVersion: "13.2",
      attachedGpus: 1,
    }),
  ],
  [
    "tesla-t4-x1-driver595-aws-g4dn.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-00000000-0000-0000-0000-000000000000",
          serial: "1650000000001",
          product: "Tesla T4",
          pciBusId: "00000000:00:1E.0",
          moduleId: 1,
        },
      ],
      driverVersion: "595.91.07",
      cudaVersion: "13.2",
      attachedGpus: 1,
    }),
  ],
  [
    "rtx-a5000-x2-driver590-v13-telegraf.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-12345678-aaaa-bbbb-cccc-0123456789ab",
          serial: "0123456789012",
          product: "NVIDIA RTX A5000",
          pciBusId: "00000000:81:00.0",
          moduleId: 1,
        },
        {
          index: 1,
          uuid: "GPU-12345678-aaaa-bbbb-cccc-0123456789cd",
          serial: "1234567890123",
          product: "NVIDIA RTX A5000",
          pciBusId: "00000000:C1:00.0",
          moduleId: 1,
        },
      ],
      driverVersion: "590.44.01",
      cudaVersion: "13.1",
      attachedGpus: 2,
    }),
  ],
  [
    "rtx4090-driver535-v12-serial-na-netdata.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-71d1acc2-662d-2166-bf9f-65272d2fc437",
          product: "NVIDIA GeForce RTX 4090",
          pciBusId: "00000000:84:00.0",
          moduleId: 1,
        },
      ],
      driverVersion: "535.86.05",
      cudaVersion: "12.2",
      attachedGpus: 1,
    }),
  ],
  [
    "tesla-k80-x4-azure-driver430-v10-cuda-not-found-pai.xml",
    reading({
      gpus: [
        k80(0, "GPU-c3b26f7a-8dcb-619c-fa1b-8029265a4db0", "0322416026235", "00001580:00:00.0"),
        k80(1, "GPU-b01b80eb-0f18-1df0-cf88-0725bd90f1e1", "0322116081614", "00002DF7:00:00.0"),
        k80(2, "GPU-30bc2701-3bc2-5f35-0ebd-9867a077e138", "0322116081614", "00004968:00:00.0"),
        k80(3, "GPU-3341aba2-f01d-2c1f-7dd4-e389779faec2", "0322416026235", "0000F8D6:00:00.0"),
      ],
      driverVersion: "430.26",
      attachedGpus: 4,
    }),
  ],
  [
    "geforce-gt730-driver384-v9-minimal-pai.xml",
    reading({
      gpus: [
        {
          index: 0,
          uuid: "GPU-09cb2925-9d01-5ca4-810b-6cdebe86b71a",
          product: "GeForce GT 730",
          pciBusId: "00000000:01:00.0",
        },
      ],
      driverVersion: "384.111",
      attachedGpus: 1,
    }),
  ],
]

/** The reading's identity: health signals are checked on their own (XmlHealthFixtures.test.ts). */
const identityOf = (reading: NodeReading): NodeReading => ({
  ...reading,
  gpus: reading.gpus.map(({ health: _health, ...gpu }) => gpu),
})

describeWithFixtures("nvidia-smi -q -x fixtures", () => {
  it.each(expectedReadings)("%s reads field by field", (file, expected) => {
    const bytes = readFixture(file)
    expect(identityOf(readingFrom(parseXmlReading(bytes)))).toStrictEqual(expected)
    expect(identityOf(readingFrom(parseNvsmiOutput(bytes)))).toStrictEqual(expected)
  })

  it.each(expectedReadings)("%s reads the same when streamed in 1 KiB chunks", (file, expected) => {
    const bytes = readFixture(file)
    const parser = new XmlReadingParser()
    for (let offset = 0; offset < bytes.length; offset += 1024) {
      parser.write(bytes.subarray(offset, offset + 1024))
    }
    expect(identityOf(readingFrom(parser.end()))).toStrictEqual(expected)
  })

  it("keeps GPUs that share a serial: GB200 has 2 serials over 4 GPUs, K80 boards pair up", () => {
    const gb200Reading = readingFrom(parseXmlReading(readFixture("gb200-x4-driver570-v12-real-serials-crlf-gpuid.xml")))
    expect(gb200Reading.gpus).toHaveLength(4)
    expect(new Set(gb200Reading.gpus.map((gpu) => gpu.serial)).size).toBe(2)
    expect(new Set(gb200Reading.gpus.map((gpu) => gpu.uuid)).size).toBe(4)
    expect(gb200Reading.gpus.map((gpu) => gpu.platform?.chassisSerial)).toStrictEqual(Array(4).fill("1821225190819"))

    const k80Reading = readingFrom(
      parseXmlReading(readFixture("tesla-k80-x4-azure-driver430-v10-cuda-not-found-pai.xml")),
    )
    const serials = k80Reading.gpus.map((gpu) => gpu.serial)
    expect(serials[0]).toBe(serials[3])
    expect(serials[1]).toBe(serials[2])
    expect(new Set(k80Reading.gpus.map((gpu) => gpu.uuid)).size).toBe(4)
  })

  it("never reports the string N/A for any field of any fixture", () => {
    for (const [file] of expectedReadings) {
      const text = JSON.stringify(readingFrom(parseXmlReading(readFixture(file))))
      expect(text).not.toMatch(/N\/A|Not Found|"None"/)
    }
  })
})
