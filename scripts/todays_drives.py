# ruff: noqa: E501  (data: long quotes stay on one line)
"""Today's drives (catalog files 101-199 and 951-999): each value quoted from a public page (its
address as the source, the sentence as the quote), assumed with the reason otherwise. The pages
were found with a search of stored public web pages; the quotes are copied from them verbatim.

    python scripts/todays_drives.py      # rewrites the files in canonical form
"""

from pathlib import Path

from arrayplan_engine.catalog import drive_from_fields, drive_to_toml

OUT = Path(__file__).resolve().parents[1] / "engine" / "arrayplan_engine" / "data" / "drives"
TB = 10**12
PRICE_NOTE = ("a typical 2024 street price for this class of drive, not from a searched page (prices move; "
              "check a current quote before buying)")


def q(value, source, quote, reason=""):
    d = {"value": value, "source": source, "quote": quote}
    if reason:
        d["reason"] = reason
    return d


def a(value, reason, source="", quote=""):
    d = {"value": value, "assumed": True, "reason": reason}
    if source:
        d["source"] = source
        d["quote"] = quote
    return d


def years_5(cap, dwpd):
    return int(round(dwpd * cap * 365 * 5))


HEISE = "https://www.heise.de/newsticker/meldung/Kioxia-bringt-PCIe-4-0-SSDs-mit-bis-zu-30-72-TByte-Speicherplatz-4666097.html?wt_mc=rss.red.ho.ho.rdf.beitrag.beitrag"
H_CM6 = "Das Topmodell CM6 kommt in der teuersten Version mit 30,72 TByte Speicherplatz daher und schafft sequenzielle Übertragungsraten von 6,9 GByte/s lesend sowie 4,2 GByte/s schreibend."
H_U3 = "Kioxia bringt den Speicher in 15 mm hohen 2,5-Zoll-Gehäusen unter, die per U.3 (PCIe 4.0 x4) angeschlossen werden."
H_RR = "Beeindruckend ist die von Kioxia angegebene Zufallszugriffsrate von 1,4 Millionen IOPS lesend."
H_RW = "Dafür hinkt die 30,72 TByte große CM6 schreibend mit 170.000 IOPS deutlich zurück."
H_CD6 = "Die etwas langsamere CD6 bietet Kioxia mit maximal 15,36 TByte an."
H_CD6_SEQ = "Sie kommt auf 6,2 GByte/s lesend und 4 GByte/s schreibend."
H_CD6_IOPS = "Die IOPS beziffert der Hersteller auf 1 Million lesend beziehungsweise 85.000 schreiben."
H_CH = "Zudem läuft der eigene SSD-Controller nur in der CM6 mit den vollen 18 Kanälen, die CD6 muss mit 16 vorlieb nehmen."
H_TLC = "Kioxia setzt stets eigenen BiCS4-TLC-Flash mit 96 Layern ein."
H_1DWPD = "Bei den Standardversionen der CM6- und CD6-Serien garantiert Kioxia ein komplettes Beschreiben pro Tag (1 DWPD)."
H_3DWPD = "Versionen mit drei garantierten Befüllungen pro Tag (3 DWPD) kommen bei beiden Baureihen auf maximal 12,8 TByte Speicherplatz."
H_3DWPD_IOPS = "erreichen die 3-DWPD-Versionen höhere Schreibwerte von 350.000 IOPS (CM6) beziehungsweise 250.000 IOPS (CD6)."

R_STEADY = ("enterprise data sheets give random-write IOPS measured in steady state (after preconditioning, SNIA PTS), "
            "so the figure is the sustained one; the fresh-out-of-box rate is not given")
R_WARRANTY5 = "the 5-year warranty is assumed (the usual term of enterprise SSDs; the page does not give it)"
R_POWER_NVME = ("typical PCIe 4.0 U.2/U.3 enterprise SSD under load (~20 W) and idle (~5 W), as the Intel D7-P5500's "
                "'功率闲置5W , 操作20W'; the page gives no figure for this drive")
R_AFR_25M = "data sheets of this class give 2.5 million hours MTTF -> 8766 / 2.5e6 = 0.35% per year; the page gives none"
R_UBER_ENT = "enterprise SSD data-sheet class (1 sector per 10^17 bits read); the page gives none"
R_EAGER = ("data-centre SSD firmware cleans in the background to bound write latency (eager); the page does not "
           "describe the garbage collection")


def kioxia(name, display, family, cap, cap_q, cap_src, seq_r, seq_w, seq_q, seq_note, rr, rr_q, rr_note, rw, rw_q, rw_note,
           channels, dwpd, dwpd_q, price):
    return {
        "name": name, "display_name": display, "vendor": "Kioxia", "family": family, "kind": "ssd",
        "interface": q("pcie-gen4-x4", HEISE, H_U3),
        "form_factor": q("2.5in", HEISE, H_U3, "U.3, 15 mm, in a 2.5-inch case"),
        "capacity_bytes": cap_src(cap, cap_q),
        "nand_type": q("tlc", HEISE, H_TLC),
        "channels": q(channels, HEISE, H_CH, "NAND channels of the controller: the model's parallel units"),
        "gc_policy": a("eager", R_EAGER),
        "random_read_iops": rr(rr_q, rr_note),
        "steady_random_write_iops": rw(rw_q, rw_note),
        "seq_read_bytes_per_s": seq_r(seq_q, seq_note),
        "seq_write_bytes_per_s": seq_w(seq_q, seq_note),
        "endurance_bytes_written": a(years_5(cap, dwpd), f"{dwpd} DWPD x {cap / TB:g} TB x 365 x 5 years; {R_WARRANTY5}", HEISE, dwpd_q),
        "active_power_w": a(20.0, R_POWER_NVME),
        "idle_power_w": a(5.0, R_POWER_NVME),
        "price_usd": a(price, PRICE_NOTE),
        "price_year": a(2024, "the year of the price assumption"),
        "annual_failure_rate": a(0.0035, R_AFR_25M),
        "uber": a(1e-17, R_UBER_ENT),
    }


drives = []
drives.append(kioxia(
    "kioxia-cm6-r-30720gb", "Kioxia CM6-R 30.72TB (PCIe 4.0 U.3, 1 DWPD)", "CM6", 30_720_000_000_000, H_CM6,
    lambda v, qq: q(v, HEISE, qq, "30,72 TByte = 30.72e12 bytes"),
    lambda qq, n: q(6.9e9, HEISE, qq, n), lambda qq, n: q(4.2e9, HEISE, qq, n), H_CM6, "GByte/s read as 10^9 B/s",
    lambda qq, n: a(1_400_000.0, n, HEISE, qq), H_RR, "the series' maximum (the sentence names no capacity); an upper bound for this capacity",
    lambda qq, n: q(170_000.0, HEISE, qq, n), H_RW, R_STEADY,
    18, 1, H_1DWPD, 4500.0))
drives.append(kioxia(
    "kioxia-cm6-v-12800gb", "Kioxia CM6-V 12.8TB (PCIe 4.0 U.3, 3 DWPD)", "CM6", 12_800_000_000_000, H_3DWPD,
    lambda v, qq: q(v, HEISE, qq, "the largest 3-DWPD capacity: 12,8 TByte = 12.8e12 bytes"),
    lambda qq, n: a(6.9e9, n, HEISE, qq), lambda qq, n: a(4.2e9, n, HEISE, qq), H_CM6,
    "the 30.72 TB CM6's figures; the page gives none for the 3-DWPD version, taken as the same controller and NAND",
    lambda qq, n: a(1_400_000.0, n, HEISE, qq), H_RR, "the series' maximum (the sentence names no capacity); an upper bound for this capacity",
    lambda qq, n: q(350_000.0, HEISE, qq, n), H_3DWPD_IOPS, R_STEADY + "; CM6 3-DWPD version",
    18, 3, H_3DWPD, 2600.0))
drives.append(kioxia(
    "kioxia-cd6-r-15360gb", "Kioxia CD6-R 15.36TB (PCIe 4.0 U.3, 1 DWPD)", "CD6", 15_360_000_000_000, H_CD6,
    lambda v, qq: q(v, HEISE, qq, "15,36 TByte = 15.36e12 bytes, the CD6's largest"),
    lambda qq, n: q(6.2e9, HEISE, qq, n), lambda qq, n: q(4.0e9, HEISE, qq, n), H_CD6_SEQ, "GByte/s read as 10^9 B/s",
    lambda qq, n: q(1_000_000.0, HEISE, qq, n), H_CD6_IOPS, "",
    lambda qq, n: q(85_000.0, HEISE, qq, n), H_CD6_IOPS, R_STEADY,
    16, 1, H_1DWPD, 1900.0))

HT = "https://www.hardwaretimes.com/micron-unveils-7400-series-enterprise-nvme-drives-up-to-6600-mb-s-seq-read-speeds/"
HT_TITLE = "Micron Unveils 7400 Series Enterprise NVMe Drives: Up to 6,600 MB/s Seq. Read Speeds and 7.68 TB Capacity"
HT_GEN4 = "The drives come in various form factors from M.2 to U.3m and E1.S, with all of them leveraging the PCIe Gen 4 bus."
HT_RR = "The random read IOPS are also cut from up to a million on the U.3 to 650K on the M.2 lineup."
HT_RW = "The writes are down to 105K IOPS from 190K on the U.3."
HT_PRO = "The former is meant for read-intensive workloads with a 1 drive write per day rating."
HT_TLC = "Micron’s 7400 SSD series is based on 96-layer 3D TLC NAND cells, and all the drives come with a five year warranty."
HT_POWER = "They have an MTTF rating of 2 million hours and a TDP of 8.25W for the M.2, 12W for the E1.S, and 22W for the U.3 drives."
cap = 7_680_000_000_000
drives.append({
    "name": "micron-7400-pro-7680gb", "display_name": "Micron 7400 PRO 7.68TB (PCIe 4.0 U.3, 1 DWPD)", "vendor": "Micron",
    "family": "7400", "kind": "ssd",
    "interface": q("pcie-gen4-x4", HT, HT_GEN4, "U.3 NVMe on four PCIe 4.0 lanes"),
    "form_factor": a("2.5in", "the U.3 version (the page lists M.2, U.3 and E1.S); U.3 is a 2.5-inch case", HT, HT_GEN4),
    "capacity_bytes": q(cap, HT, HT_TITLE, "the series' largest capacity, a 1-DWPD PRO in U.3"),
    "nand_type": q("tlc", HT, HT_TLC),
    "channels": a(16, "a 16-channel controller, usual for PCIe 4.0 enterprise SSDs; the page does not say"),
    "gc_policy": a("eager", R_EAGER),
    "random_read_iops": q(1_000_000.0, HT, HT_RR, "U.3: 'up to a million'"),
    "steady_random_write_iops": a(190_000.0, "the U.3 family maximum (likely the 3-DWPD MAX's); an upper bound for the PRO. " + R_STEADY, HT, HT_RW),
    "seq_read_bytes_per_s": q(6.6e9, HT, HT_TITLE, "the family's maximum, reached by the U.3 drives; MB/s read as 10^6 B/s"),
    "seq_write_bytes_per_s": a(4.4e9, "not on the page (its 2,200 MB/s is the M.2's); 4,400 MB/s, twice the M.2 as the U.3 doubles its random reads, assumed", HT, HT_RR),
    "endurance_bytes_written": q(years_5(cap, 1), HT, HT_PRO, "1 DWPD x 7.68 TB x 365 x 5 years ('all the drives come with a five year warranty')"),
    "active_power_w": q(22.0, HT, HT_POWER, "the U.3 TDP, the most it draws: taken as the power under load"),
    "idle_power_w": a(5.0, R_POWER_NVME),
    "price_usd": a(900.0, PRICE_NOTE),
    "price_year": a(2024, "the year of the price assumption"),
    "annual_failure_rate": q(0.00438, HT, HT_POWER, "MTTF 2 million hours -> 8766 / 2e6 = 0.44% per year"),
    "uber": a(1e-17, R_UBER_ENT),
})

CNB = "http://shadafang.com/a/2020/0619/1592508507.html"
CNB_CAPS = "P5500是每天1个硬盘写入(DWPD)系列 , 容量从1.92TB到7.68TB不等 , 而P5600是3个DWPD型号 , 容量从1.6TB到6.4TB 。"
CNB_IF = "介面 PCIe 4.0 NVMe 1.3c , 采用NAND Intel 96L 3D TLC"
CNB_SEQ = "顺序读取 7000MB/s , 顺序写入 4300 MB/s"
CNB_IOPS = "随机读取 (4 kB) 1M IOPS随机写入 (4 kB) 130k IOPS 260k IOPS"
CNB_POWER = "功率闲置5W , 操作20W"
CNB_END = "写耐久度分别是 1 DWPD 和3 DWPD , 保修5年"
for name, display, cap, rw, dwpd, price in (
        ("intel-d7-p5500-7680gb", "Intel D7-P5500 7.68TB (PCIe 4.0 U.2, 1 DWPD)", 7_680_000_000_000, 130_000.0, 1, 950.0),
        ("intel-d7-p5600-6400gb", "Intel D7-P5600 6.4TB (PCIe 4.0 U.2, 3 DWPD)", 6_400_000_000_000, 260_000.0, 3, 1100.0)):
    drives.append({
        "name": name, "display_name": display, "vendor": "Intel", "family": "D7-P5500/P5600", "kind": "ssd",
        "interface": q("pcie-gen4-x4", CNB, CNB_IF),
        "form_factor": a("2.5in", "U.2 2.5-inch 15 mm, as the same spec line says"),
        "capacity_bytes": q(cap, CNB, CNB_CAPS, "the largest capacity of the line"),
        "nand_type": q("tlc", CNB, CNB_IF),
        "channels": a(12, "Intel's previous generation used a 12-channel controller; the source says Intel did not share this one's ('英特尔没有分享新固态硬盘的内部架构信息')"),
        "gc_policy": a("eager", R_EAGER),
        "random_read_iops": q(1_000_000.0, CNB, CNB_IOPS, "4 kB random read 1M IOPS"),
        "steady_random_write_iops": q(rw, CNB, CNB_IOPS, ("130k for the P5500, 260k for the P5600. " + R_STEADY)),
        "seq_read_bytes_per_s": q(7.0e9, CNB, CNB_SEQ),
        "seq_write_bytes_per_s": q(4.3e9, CNB, CNB_SEQ),
        "endurance_bytes_written": q(years_5(cap, dwpd), CNB, CNB_END, f"{dwpd} DWPD x {cap / TB:g} TB x 365 x 5 years (5-year warranty)"),
        "active_power_w": q(20.0, CNB, CNB_POWER, "operating 20 W"),
        "idle_power_w": q(5.0, CNB, CNB_POWER, "idle 5 W"),
        "price_usd": a(price, PRICE_NOTE),
        "price_year": a(2024, "the year of the price assumption"),
        "annual_failure_rate": a(0.00438, "Intel data-centre SSDs of the period rate 2 million hours MTBF -> 0.44% per year; the page gives none"),
        "uber": a(1e-17, R_UBER_ENT),
    })

ARCH = "https://www.architecting.it/blog/100tb-ssd-vendors/"
ARCH_CAP = "The Solidigm D5-P5336 is an enterprise drive currently supporting up to 61.44TB and debuted in July 2023"
ARCH_PERF = ("However, performance declines slightly from the 61.44TB model, with 930,000 read IOPS (1,005,000 on the 61TB drive) "
             "and 25,000 write IOPS (38,000 for 61TB) and 3,200 MB/s sequential write (3,300 MB/s on 61TB).")
ARCH_READ = "For read throughput, there is a slight improvement with 7,400 MB/s sequential read (7000 MB/s on 61TB)."
HWC = "https://hwcooling.net/en/ssd-reaches-122tb-capacity-beating-largest-hdd-by-four-times"
HWC_IF = "Solidigm uses a proprietary NVMe 2.0 controller that has a PCIe 4.0 ×4 interface"
HWC_QLC = "QLC NAND is used again, these should be Solidigm’s 192-layer chips"
HWC_DIRECT = ("This could probably be a figure representing the sustained write speed in QLC mode instead of the speed for the "
              "“pseudoSLC” write cache we are used to from consumer SSDs")
SMD = "https://smd-chip.com/en/IC_specification_high-density-pcie-4-0-qlc-ssd-datasheet.html"
SMD_ACTIVE = "The maximum average active power during write operations is specified at 25 watts (W)."
SMD_IDLE = "During idle states, where the drive is powered on but not actively reading or writing data, the power consumption drops significantly to 5W."
cap = 61_440_000_000_000
drives.append({
    "name": "solidigm-d5-p5336-61440gb", "display_name": "Solidigm D5-P5336 61.44TB (PCIe 4.0 QLC)", "vendor": "Solidigm",
    "family": "D5-P5336", "kind": "ssd",
    "interface": q("pcie-gen4-x4", HWC, HWC_IF, "the 122.88 TB article; it is the same series as the 61.44 TB drive"),
    "form_factor": a("2.5in", "the U.2 version (the series also comes as E1.L and E3.S); the pages do not say which"),
    "capacity_bytes": q(cap, ARCH, ARCH_CAP),
    "nand_type": q("qlc", HWC, HWC_QLC),
    "channels": a(16, "a 16-channel controller, usual for PCIe 4.0 enterprise SSDs; the pages do not say"),
    "gc_policy": a("eager", R_EAGER),
    "random_read_iops": q(1_005_000.0, ARCH, ARCH_PERF, "1,005,000 on the 61TB drive"),
    "steady_random_write_iops": q(38_000.0, ARCH, ARCH_PERF, "38,000 for 61TB. " + R_STEADY),
    "seq_read_bytes_per_s": q(7.0e9, ARCH, ARCH_READ, "7000 MB/s on 61TB"),
    "seq_write_bytes_per_s": q(3.3e9, ARCH, ARCH_PERF,
                               "3,300 MB/s on 61TB: the direct-to-QLC rate (no SLC write cache: the 122.88 TB article reads the "
                               "figure as 'the sustained write speed in QLC mode'), which the model uses for every write"),
    "endurance_bytes_written": a(years_5(cap, 0.58), ("0.58 DWPD x 61.44 TB x 365 x 5 years: Solidigm's rating for this drive as "
                                                      "recalled, not found on the searched pages; QLC endurance is low, as the QLC pages say")),
    "active_power_w": a(25.0, "the D5-P5316's (the same family's previous QLC drive) maximum average active power, as quoted", SMD, SMD_ACTIVE),
    "idle_power_w": a(5.0, "the D5-P5316's idle power, as quoted", SMD, SMD_IDLE),
    "price_usd": a(6000.0, PRICE_NOTE),
    "price_year": a(2024, "the year of the price assumption"),
    "annual_failure_rate": a(0.0035, R_AFR_25M),
    "uber": a(1e-17, R_UBER_ENT),
})

CB = "https://www.computerbase.de/2018-08/intel-d5-p4320-qlc-ssd-1.600-schreibzyklen/"
CB_CAP = "Die D5-P4320 soll 7,68 TB Speicherplatz im 2,5-Zoll-Gehäuse bieten."
CB_READ = "Die Leistungswerte beim Lesen sind mit bis zu 3.200 MB/s und 427.000 IOPS relativ hoch."
CB_WRITE = "Beim Schreiben sollen dagegen nur 1.000 MB/s und 36.000 IOPS möglich sein."
CB_NOCACHE = "Dies weist darauf hin, dass Intel auf einen Pseudo-SLC-Cache als Schreibpuffer verzichtet."
CB_DWPD = "Die garantierte Mindestschreibmenge wird mit 0,9 Füllungen (Drive Writes Per Day) beim sequenziellen Schreiben angegeben."
cap = 7_680_000_000_000
drives.append({
    "name": "intel-d5-p4320-7680gb", "display_name": "Intel D5-P4320 7.68TB (PCIe 3.0 U.2, QLC)", "vendor": "Intel",
    "family": "D5-P4320", "kind": "ssd",
    "interface": a("pcie-gen3-x4", "the page names the U.2 connector ('Über den U.2-Anschluss'); a 2018 Intel NVMe U.2 drive is PCIe 3.0 x4"),
    "form_factor": q("2.5in", CB, CB_CAP),
    "capacity_bytes": q(cap, CB, CB_CAP, "7,68 TB = 7.68e12 bytes"),
    "nand_type": q("qlc", CB, "D5-P4320: Intels QLC-SSD ist auf 1.600 Schreibzyklen ausgelegt"),
    "pe_cycles": q(1600, CB, "D5-P4320: Intels QLC-SSD ist auf 1.600 Schreibzyklen ausgelegt"),
    "channels": a(12, "Intel's 12-channel NVMe controller of the period; the page does not say"),
    "gc_policy": a("eager", R_EAGER),
    "random_read_iops": q(427_000.0, CB, CB_READ),
    "steady_random_write_iops": q(36_000.0, CB, CB_WRITE, R_STEADY),
    "seq_read_bytes_per_s": q(3.2e9, CB, CB_READ),
    "seq_write_bytes_per_s": q(1.0e9, CB, CB_WRITE, "no SLC write cache ('" + CB_NOCACHE + "'): this is the direct-to-QLC rate"),
    "endurance_bytes_written": q(years_5(cap, 0.9), CB, CB_DWPD, "0.9 DWPD (sequential) x 7.68 TB x 365 x 5 years; the 5-year warranty is assumed"),
    "active_power_w": a(18.0, "typical PCIe 3.0 U.2 QLC drive under writes (~18 W); the page gives none"),
    "idle_power_w": a(5.0, "typical PCIe 3.0 U.2 SSD idle (~5 W); the page gives none"),
    "price_usd": a(800.0, PRICE_NOTE),
    "price_year": a(2024, "the year of the price assumption"),
    "annual_failure_rate": a(0.00438, "Intel data-centre SSDs rate 2 million hours MTBF -> 0.44% per year; the page gives none"),
    "uber": a(1e-17, R_UBER_ENT),
})

AT = "http://ww.anandtech.com/Show/Index/15855?cPage=2&all=False&sort=0&page=1&slug=kioxia-launches-pm6-first-24g-sas-ssd-up-to-3072-tb"
AT_SAS = "This is the first SSD available to support the latest 24G SAS interface, doubling performance over the existing 12Gb/s SAS standard."
AT_CAP = "Using 96-layer 3D TLC NAND flash memory, the PM6 offers capacities up to 30.72 TB and performance up to 4300 MB/s."
AT_ASIC = "Kioxia's enterprise SAS SSDs and their enterprise NVMe SSDs share the same bilingual controller ASIC"
cap = 30_720_000_000_000
drives.append({
    "name": "kioxia-pm6-r-30720gb", "display_name": "Kioxia PM6-R 30.72TB (24G SAS, 1 DWPD)", "vendor": "Kioxia",
    "family": "PM6", "kind": "ssd",
    "interface": q("sas-24g", AT, AT_SAS),
    "form_factor": a("2.5in", "a 2.5-inch SAS drive; the page does not say"),
    "capacity_bytes": q(cap, AT, AT_CAP),
    "nand_type": q("tlc", AT, AT_CAP),
    "channels": a(16, "the CM6's controller ASIC ('" + AT_ASIC + "') at the CD6's 16 channels; the page does not say"),
    "gc_policy": a("eager", R_EAGER),
    "random_read_iops": a(595_000.0, "not on the page; 595K, what one 24G SAS port carries of 4 KiB reads at the controller's pace, assumed", AT, AT_ASIC),
    "steady_random_write_iops": a(85_000.0, "not on the page; the CD6-R's 1-DWPD steady figure (same controller ASIC), assumed. " + R_STEADY, AT, AT_ASIC),
    "seq_read_bytes_per_s": a(2.4e9, "one 24G SAS port's payload (2.4 GB/s); the family's 4300 MB/s needs both ports of a dual-port drive", AT, AT_CAP),
    "seq_write_bytes_per_s": a(2.4e9, "one 24G SAS port's payload (2.4 GB/s); the page gives no write figure"),
    "endurance_bytes_written": a(years_5(cap, 1), "1 DWPD (the -R read-intensive rating) x 30.72 TB x 365 x 5 years; not on the page"),
    "active_power_w": a(14.0, "typical 2.5-inch 24G SAS SSD under load (~14 W); the page gives none"),
    "idle_power_w": a(5.0, "typical SAS SSD idle (~5 W); the page gives none"),
    "price_usd": a(6000.0, PRICE_NOTE),
    "price_year": a(2024, "the year of the price assumption"),
    "annual_failure_rate": a(0.0035, R_AFR_25M),
    "uber": a(1e-17, R_UBER_ENT),
})

# Hard disks
C386 = "https://www.club386.com/wd-debuts-cmr-hdds-with-20tb-capacity-and-optinand-technology/"
C386_CAP = ("The company is making 20TB CMR HDDs available in two HDD families; the WD Gold 20TB (US$680), and the "
            "datacentre-targeted WD Ultrastar DC HC560 20TB.")
C386_CMR = ("Data-storage specialist Western Digital has released its first 20TB HDDs based on CMR (conventional magnetic "
            "recording) technology in the 3.5in format.")
RN = "https://rocknew10.com/western-digital-spends-26-tb-on-its-smr-hard-drives/"
RN_RPM = ("Last Monday, at a press conference in San Francisco, Western Digital unveiled a series of 7,200 rpm hard drives for "
          "data centers (enterprises and hyperscalers), including an UltraSMR mechanical model with a capacity of 26 TB "
          "(Ultrastar DC HC670).")
RN_22 = ("Western Digital therefore markets an SMR (Shingled Magnetic Recording) hard drive with a capacity of 26 TB "
         "(Ultrastar DC HC670) and a 22 TB CMR (Conventional Magnetic Recording) model")
AT2 = "http://forum.anandtech.com/Show/Index/17377?cPage=2&all=False&sort=0&page=1&slug=western-digital-announces-22tb-cmr-and-26tb-smr-hdds"
AT2_SMR = "The new Ultrastar DC HC670 uses ten platters to provide 26TB of host-managed SMR storage for cloud service providers."

R_SEEK = "typical 7,200 rpm helium nearline data sheet: average read seek ~7.5 ms; the page gives no mechanics"
R_STROKE = "typical nearline full-stroke seek (~16 ms); the page gives no mechanics"
R_POWER_HDD = "typical 3.5-inch helium nearline disk: ~7 W random operating, ~5.5 W idle; the page gives none"
R_AFR_HDD = "nearline data sheets of this class give 2.5 million hours MTBF -> 8766 / 2.5e6 = 0.35% per year; the page gives none"


def hdd(name, display, cap, cap_src, recording, rpm_src, seq, price, interface="sata-6g", family="Ultrastar DC"):
    rpm = 7200
    iops = 1.0 / (7.5e-3 + 30.0 / rpm)
    iops_reason = (f"derived from the mechanics: 1 / (average seek 7.5 ms + half a rotation {30e3 / rpm:.2f} ms) = {iops:.0f} IOPS "
                   "at QD1 (4 KiB; the seek is assumed)")
    return {
        "name": name, "display_name": display, "vendor": "Western Digital", "family": family, "kind": "hdd",
        "interface": a(interface, ("the SATA 6Gb/s model (the family also comes as 12Gb/s SAS); the page does not say" if interface == "sata-6g"
                                   else "the 12Gb/s SAS model: host-managed SMR disks are sold to cloud builders as SAS (and SATA); the page does not say")),
        "form_factor": q("3.5in", C386, C386_CMR) if "20tb" in name else a("3.5in", "WD's Ultrastar DC HC5x0/HC6x0 disks are 3.5-inch"),
        "capacity_bytes": cap_src(cap),
        "nand_type": a("hdd", "a hard disk: no NAND"),
        "rpm": rpm_src(rpm),
        "average_seek_s": a(7.5e-3, R_SEEK),
        "full_stroke_seek_s": a(16e-3, R_STROKE),
        "recording": recording,
        "random_read_iops": a(iops, iops_reason),
        "random_write_iops": a(iops, iops_reason),
        "seq_read_bytes_per_s": a(seq, f"typical outer-zone media rate of a {cap / TB:g} TB 7,200 rpm helium disk (~{seq / 1e6:.0f} MB/s); the page gives none"),
        "seq_write_bytes_per_s": a(seq, f"typical outer-zone media rate of a {cap / TB:g} TB 7,200 rpm helium disk (~{seq / 1e6:.0f} MB/s); the page gives none"),
        "active_power_w": a(7.0, R_POWER_HDD),
        "idle_power_w": a(5.5, R_POWER_HDD),
        "price_usd": price,
        "price_year": a(2024, "the year of the price assumption") if price.get("assumed") else a(2021, "the year WD launched its 20 TB CMR disks at this price (OptiNAND, 2021); the page gives no date"),
        "annual_failure_rate": a(0.0035, R_AFR_HDD),
        "uber": a(1e-15, "nearline data-sheet class (1 sector per 10^15 bits read); the page gives none"),
    }


drives.append(hdd("wd-ultrastar-hc560-20tb", "WD Ultrastar DC HC560 20TB (CMR, 7200 rpm)", 20 * TB,
                  lambda v: q(v, C386, C386_CAP), q("cmr", C386, C386_CMR),
                  lambda v: a(v, "WD's Ultrastar DC disks of this generation spin at 7,200 rpm (the HC570/HC670 page says so of the series); the page gives no speed", RN, RN_RPM),
                  269e6, a(680.0, "the WD Gold 20TB's launch price, the same disk sold to the channel; assumed for the HC560", C386, C386_CAP)))
drives.append(hdd("wd-ultrastar-hc570-22tb", "WD Ultrastar DC HC570 22TB (CMR, 7200 rpm)", 22 * TB,
                  lambda v: q(v, RN, RN_22), q("cmr", RN, RN_22),
                  lambda v: q(v, RN, RN_RPM, "the series announced with the HC570"),
                  279e6, a(450.0, PRICE_NOTE)))
drives.append(hdd("wd-ultrastar-hc670-26tb", "WD Ultrastar DC HC670 26TB (host-managed SMR, 7200 rpm)", 26 * TB,
                  lambda v: q(v, AT2, AT2_SMR), q("smr-host-managed", AT2, AT2_SMR),
                  lambda v: q(v, RN, RN_RPM),
                  279e6, a(480.0, PRICE_NOTE), interface="sas-12g"))

R_PAGE = "a 16 KiB page, the norm of today's TLC and QLC NAND; the pages give none"
R_PPB = ("256 pages (4 MiB) per block, the small end of today's 4-36 MiB blocks, so the scaled FTL keeps ~1,000 blocks; "
         "greedy-GC write amplification barely depends on the block size at that count; the pages give none")
PE = {"tlc": (7000, "enterprise TLC of 96-176 layers is rated for about 5,000-10,000 program/erase cycles; 7,000 assumed "
                    "(the rated endurance fits within it); the pages give none"),
      "qlc": (1600, "QLC is rated for far fewer cycles: the D5-P4320's 1,600 ('D5-P4320: Intels QLC-SSD ist auf 1.600 "
                    "Schreibzyklen ausgelegt'), assumed for this QLC drive too")}
R_PARITY = ("the model's internal parity choices are none, raid4-dies and rain-7+1; the drive's die-failure protection "
            "(the PM6 page: 'enough ECC and parity protection for the drive to survive the failure of two entire flash dies') "
            "is not among them, so none (its spare is then all over-provisioning)")
for d in drives:
    if d["kind"] != "ssd":
        continue
    d.setdefault("page_bytes", a(16384, R_PAGE))
    d.setdefault("pages_per_block", a(256, R_PPB))
    d.setdefault("controllers", a(1, "one NVMe/SAS controller per drive"))
    d.setdefault("internal_parity", a("none", R_PARITY))
    if "pe_cycles" not in d:
        pe, why = PE[d["nand_type"]["value"]]
        d["pe_cycles"] = a(pe, why)

ssd_n, hdd_n = 100, 950
for d in drives:
    drive = drive_from_fields(d)
    text = drive_to_toml(drive)
    if drive.kind == "ssd":
        ssd_n += 1
        n = ssd_n
    else:
        hdd_n += 1
        n = hdd_n
    (OUT / f"{n:03d}-{drive.name}.toml").write_text(text, encoding="utf-8")
    print(n, drive.name)
