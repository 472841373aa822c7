-- SPDX-License-Identifier: MIT
--
-- uroce.lua: a Wireshark post-dissector that checks the ICRC of every RoCEv2
-- packet (UDP destination port 4791 over IPv4 or IPv6, any sender), which
-- Wireshark's own infiniband dissector does not do. For each such packet it
-- recomputes the ICRC exactly as PROTOCOL.md section 6 and wire/icrc.c do
-- (8 bytes of ones for the LRH, the IP header with TOS/TTL/checksum or traffic
-- class/flow label/hop limit set to ones, UDP with the checksum set to ones,
-- BTH byte 4 set to ones, CRC-32 as zlib, trailer least-significant byte
-- first), compares it with the packet's trailer and adds the fields
-- uroce.icrc ("good", "bad" or "unchecked" when the capture cut the packet),
-- uroce.icrc.calc and uroce.icrc.wire (the CRC values as uroce decode prints
-- them), an expert-info warning on a bad ICRC, and uroce.annotation, the
-- pcapng frame comment uroce writes on each packet (usable as a column).
-- The headers it decodes are two that Wireshark 4.0's dissector leaves as
-- "Unknown/Vendor Specific Data": the XRCETH of XRC requests
-- (uroce.xrceth.srqn, uroce.xrceth.reserved) and the RC ATOMIC WRITE of
-- IBA 1.5 (opcode 0x1D, which Wireshark 4.0 calls "Unknown (29)": its RETH
-- as uroce.atomic_write.va, .rkey, .dmalen and its 8 bytes as
-- uroce.atomic_write.data); and the RC FLUSH of the memory placement
-- extensions (IBA A19, opcode 0x1C, "Unknown (28)" to Wireshark 4.0: its
-- FETH as uroce.flush.plt, the placement type, and uroce.flush.sel, the
-- selectivity level, and its RETH as uroce.flush.va, .rkey, .dmalen); it
-- changes nothing Wireshark shows.
-- Install: `uroce wireshark-plugin install`, or use it once with
-- `tshark -X lua_script:uroce.lua`. Needs Wireshark 3.x/4.x (Lua 5.2, bit32).

local uroce = Proto("uroce", "uroce ICRC check")

local f_icrc = ProtoField.string("uroce.icrc", "ICRC status")
local f_calc = ProtoField.uint32("uroce.icrc.calc", "Computed ICRC", base.HEX)
local f_wire = ProtoField.uint32("uroce.icrc.wire", "ICRC in the packet", base.HEX)
local f_note = ProtoField.string("uroce.annotation", "uroce annotation")
local f_xrceth = ProtoField.bytes("uroce.xrceth", "XRC Extended Transport Header")
local f_xrc_resv = ProtoField.uint8("uroce.xrceth.reserved", "Reserved", base.HEX)
local f_xrc_srqn = ProtoField.uint24("uroce.xrceth.srqn", "XRC SRQ number", base.HEX)
local f_aw = ProtoField.bytes("uroce.atomic_write", "RDMA ATOMIC WRITE (IBA 1.5)")
local f_aw_va = ProtoField.uint64("uroce.atomic_write.va", "Virtual Address", base.HEX)
local f_aw_rkey = ProtoField.uint32("uroce.atomic_write.rkey", "Remote Key", base.HEX)
local f_aw_len = ProtoField.uint32("uroce.atomic_write.dmalen", "DMA Length", base.DEC)
local f_aw_data = ProtoField.bytes("uroce.atomic_write.data", "Data (8 bytes)")
local f_fl = ProtoField.bytes("uroce.flush", "RDMA FLUSH (IBA A19): FETH and RETH")
local f_fl_plt = ProtoField.uint8("uroce.flush.plt", "Placement Type", base.HEX, nil, 0x0F)
local f_fl_sel = ProtoField.uint8("uroce.flush.sel", "Selectivity Level", base.DEC, nil, 0x30)
local f_fl_va = ProtoField.uint64("uroce.flush.va", "Virtual Address", base.HEX)
local f_fl_rkey = ProtoField.uint32("uroce.flush.rkey", "Remote Key", base.HEX)
local f_fl_len = ProtoField.uint32("uroce.flush.dmalen", "DMA Length", base.DEC)
uroce.fields = { f_icrc, f_calc, f_wire, f_note, f_xrceth, f_xrc_resv, f_xrc_srqn,
                 f_aw, f_aw_va, f_aw_rkey, f_aw_len, f_aw_data,
                 f_fl, f_fl_plt, f_fl_sel, f_fl_va, f_fl_rkey, f_fl_len }

local e_bad = ProtoExpert.new("uroce.icrc.bad.expert", "Bad ICRC",
                              expert.group.CHECKSUM, expert.severity.WARN)
local e_cut = ProtoExpert.new("uroce.icrc.unchecked.expert",
                              "ICRC not checked: the packet is cut short in the capture",
                              expert.group.UNDECODED, expert.severity.NOTE)
uroce.experts = { e_bad, e_cut }

uroce.prefs.port = Pref.uint("RoCEv2 UDP port", 4791, "UDP destination port of RoCEv2")
uroce.prefs.info_note = Pref.bool("Annotation in the Info column", false,
                                  "Append the pcapng frame comment to the Info column")

local fx_ip = Field.new("ip")
local fx_ipv6 = Field.new("ipv6")
local fx_udp = Field.new("udp")
local fx_comment = Field.new("frame.comment")

-- CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), one table lookup per byte.
local band, bxor, rshift, bnot = bit32.band, bit32.bxor, bit32.rshift, bit32.bnot
local crc_table = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then
            c = bxor(rshift(c, 1), 0xEDB88320)
        else
            c = rshift(c, 1)
        end
    end
    crc_table[i] = c
end

-- Feed the bytes of string s to CRC register c, with the bytes whose 1-based
-- positions are keys of mask replaced by their value (an OR mask).
local function crc_add(c, s, mask)
    local byte = string.byte
    for i = 1, #s do
        local b = byte(s, i)
        local m = mask and mask[i]
        if m then b = bit32.bor(b, m) end
        c = bxor(crc_table[band(bxor(c, b), 0xFF)], rshift(c, 8))
    end
    return c
end

-- Variant fields, as OR masks by 1-based byte position (PROTOCOL.md 6).
local MASK_IPV4 = { [2] = 0xFF, [9] = 0xFF, [11] = 0xFF, [12] = 0xFF }
local MASK_IPV6 = { [1] = 0x0F, [2] = 0xFF, [3] = 0xFF, [4] = 0xFF, [8] = 0xFF }
local MASK_UDP_BTH = { [7] = 0xFF, [8] = 0xFF, [8 + 5] = 0xFF }
local LRH_ONES = string.rep("\255", 8)

-- The ICRC of an IB packet; ip is the IP header (with options or extension
-- headers), udp_ib the UDP header and the IB packet without its ICRC.
local function icrc(ip, ipmask, udp_ib)
    local c = crc_add(0xFFFFFFFF, LRH_ONES)
    c = crc_add(c, ip, ipmask)
    c = crc_add(c, udp_ib, MASK_UDP_BTH)
    return bnot(c)
end

-- The last IPv4 or IPv6 header that starts before offset off: the one that
-- carries the UDP datagram there (tunnels put outer headers first).
local function ip_before(off)
    local best, ver = nil, nil
    for _, fi in ipairs({ fx_ip() }) do
        if fi.offset < off and (not best or fi.offset > best.offset) then best, ver = fi, 4 end
    end
    for _, fi in ipairs({ fx_ipv6() }) do
        if fi.offset < off and (not best or fi.offset > best.offset) then best, ver = fi, 6 end
    end
    return best, ver
end

local function u16(tvb, off)
    return tvb:range(off, 2):uint()
end

-- XRC (transport bits 101): every request carries a 4-byte XRCETH after the
-- BTH (IBA 9.3.9); READ responses (0x0d-0x10), Acknowledge (0x11) and Atomic
-- Acknowledge (0x12) do not.
local function add_xrceth(tvb, t, boff, blen)
    local op = tvb:range(boff, 1):uint()
    local low = band(op, 0x1F)
    if rshift(op, 5) ~= 5 or (low >= 0x0D and low <= 0x12) or low > 0x17 then return end
    if blen < 12 + 4 then return end
    local x = t:add(f_xrceth, tvb:range(boff + 12, 4))
    x:add(f_xrc_resv, tvb:range(boff + 12, 1))
    x:add(f_xrc_srqn, tvb:range(boff + 13, 3))
end

-- RC ATOMIC WRITE (opcode 0x1D, IBA 1.5): BTH, RETH (VA 8, R_Key 4, DMA
-- length 4), then the 8 bytes written; blen counts BTH to the ICRC.
local function add_atomic_write(tvb, t, boff, blen)
    if tvb:range(boff, 1):uint() ~= 0x1D or blen < 12 + 16 + 8 + 4 then return end
    local a = t:add(f_aw, tvb:range(boff + 12, 24))
    a:add(f_aw_va, tvb:range(boff + 12, 8))
    a:add(f_aw_rkey, tvb:range(boff + 20, 4))
    a:add(f_aw_len, tvb:range(boff + 24, 4))
    a:add(f_aw_data, tvb:range(boff + 28, 8))
end

-- RC FLUSH (opcode 0x1C, IBA A19): BTH, FETH (reserved 3 bytes, then SEL in
-- bits 5..4 and PLT in bits 3..0 of its last byte; rxe_hdr.h), RETH (VA 8,
-- R_Key 4, DMA length 4), no payload; blen counts BTH to the ICRC.
local function add_flush(tvb, t, boff, blen)
    if tvb:range(boff, 1):uint() ~= 0x1C or blen < 12 + 4 + 16 + 4 then return end
    local f = t:add(f_fl, tvb:range(boff + 12, 20))
    f:add(f_fl_plt, tvb:range(boff + 15, 1))
    f:add(f_fl_sel, tvb:range(boff + 15, 1))
    f:add(f_fl_va, tvb:range(boff + 16, 8))
    f:add(f_fl_rkey, tvb:range(boff + 24, 4))
    f:add(f_fl_len, tvb:range(boff + 28, 4))
end

function uroce.dissector(tvb, pinfo, tree)
    local comments = { fx_comment() }
    if #comments > 0 then
        local texts = {}
        for _, fi in ipairs(comments) do texts[#texts + 1] = tostring(fi.value) end
        local note = table.concat(texts, "; ")
        tree:add(f_note, note):set_generated()
        if uroce.prefs.info_note then pinfo.cols.info:append(" [" .. note .. "]") end
    end

    local udps = { fx_udp() }
    local udp = udps[#udps]
    if not udp or udp.offset + 4 > tvb:len() then return end
    local uoff = udp.offset
    if u16(tvb, uoff + 2) ~= uroce.prefs.port then return end
    local ipfi, ver = ip_before(uoff)
    if not ipfi then return end

    local t = tree:add(uroce, tvb:range(uoff))
    if uoff + 8 + 16 <= tvb:len() then
        add_xrceth(tvb, t, uoff + 8, tvb:len() - uoff - 8)
        add_atomic_write(tvb, t, uoff + 8, tvb:len() - uoff - 8)
        add_flush(tvb, t, uoff + 8, tvb:len() - uoff - 8)
    end
    -- A UDP header, BTH (12) and ICRC (4) at the least, all captured.
    local ulen = uoff + 8 <= tvb:len() and u16(tvb, uoff + 4) or 0
    if ulen < 8 + 12 + 4 or uoff + ulen > tvb:len() then
        t:add(f_icrc, "unchecked"):set_generated()
        t:add_proto_expert_info(e_cut)
        return
    end
    local ip = tvb:raw(ipfi.offset, uoff - ipfi.offset)
    local calc = icrc(ip, ver == 4 and MASK_IPV4 or MASK_IPV6, tvb:raw(uoff, ulen - 4))
    local wire = tvb:range(uoff + ulen - 4, 4):le_uint()
    local good = calc == wire
    local item = t:add(f_icrc, good and "good" or "bad")
    item:set_generated()
    t:add(f_calc, calc):set_generated()
    t:add(f_wire, tvb:range(uoff + ulen - 4, 4), wire)
    if not good then
        item:add_proto_expert_info(e_bad, string.format(
            "Bad ICRC: packet 0x%08x, computed 0x%08x", wire, calc))
    end
end

register_postdissector(uroce)
