// A seat's observation vector written straight from the core's state: the same entries, the same float32
// values, as kutnahora.learned.state_encoding.StateEncoder (and so ObservationLayout.encode of the engine's
// observe(state, viewer)), in the raw or the normalised form. The layout's offsets are given by Python
// (kutnahora.envs.native_play), so that the layout stays defined in one place.
#include <algorithm>
#include <cstring>

#include "rules.hpp"

namespace kh {

Encoding::Encoding(const std::vector<int>& t, const std::vector<float>& scale_, const std::vector<float>& low_)
    : scale(scale_), low(low_) {
    constexpr int FIELDS = 42;
    if (t.size() < size_t(FIELDS) + 1) throw std::invalid_argument("an encoding table ends too early");
    int k = 0;
    for (int* field : {&size, &players, &phase, &counters, &start_seat, &decks, &arms, &prices, &no_market,
                       &town_hall, &hall_cols, &stack, &town_discards, &building_in_hand, &city, &city_cols,
                       &square, &mines, &mine_cols, &mine_square, &bank, &pool, &council, &revealed,
                       &current_event, &guild_card, &mine_card, &sets_left, &kind, &owes, &drawn, &kept,
                       &discarded, &seat0, &seat_size, &mine_tiles, &buildings, &tiles, &guild_set_at,
                       &guilds_at, &production_at, &hand_at, &slots_at})
        *field = t[k++];
    if (k != FIELDS + 1) throw std::logic_error("encoding fields miscounted");
    int events = t[k++];
    if (int(t.size()) != k + events) throw std::invalid_argument("an encoding table's event ids are miscounted");
    for (int i = 0; i < events; ++i) {
        int id = t[k + i];
        if (id < 0 || id > 1000) throw std::invalid_argument("an event id is out of range");
        if (int(event_index.size()) <= id) event_index.resize(id + 1, -1);
        event_index[id] = i;
    }
    if (int(scale.size()) != size || int(low.size()) != size)
        throw std::invalid_argument("the normalised form's scale and bounds must have the vector's size");
}

namespace {

inline int rel(int seat, int viewer, int n) { return ((seat - viewer) % n + n) % n; }

}  // namespace

void encode(const State& s, const Encoding& e, int viewer, bool uses_events, bool normalized, float* out) {
    const Components& c = *s.comp;
    const int n = int(s.players.size());
    const int me = viewer < 0 ? 0 : viewer;
    std::memset(out, 0, sizeof(float) * size_t(e.size));

    out[e.players + n - 2] = 1;
    out[e.phase + s.phase] = 1;
    const int turn = s.turn_index >= 2 * n ? 3 : s.turn_index / n + 1;
    const float counters[15] = {
        float(s.round), float(c.rounds), float(turn), float(s.cards_left_in_turn), float(s.tax),
        float(s.red_stack.size()), float(s.mine_stack.size()), float(s.mine_discard.size()),
        float(s.technology_taken), float(mine_draws(s)), float(s.barbara_next), float(s.phase == OVER),
        float(uses_events), float(s.free_action), float(s.mine_reshuffles)};
    std::copy(counters, counters + 15, out + e.counters);
    out[e.start_seat + rel(s.start_seat, me, n)] = 1;

    // the market
    out[e.decks] = float(s.deck_position[POPULATION_DECK]);
    out[e.decks + 1] = float(s.deck_position[ORE_DECK]);
    for (int a = 0; a < 5; ++a) out[e.arms + a] = float(s.arms[a]);
    int prices[6];
    for (int k = 0; k < 6; ++k) {
        prices[k] = market_price(s, k);
        out[e.prices + k] = float(prices[k]);
        if (market_closed(s, k)) out[e.no_market + k] = 1;
    }

    // the town hall: present, label, size, top building per place
    constexpr int LABELS = 10;
    for (size_t r = 0; r < s.town_hall.size(); ++r)
        for (size_t place = 0; place < s.town_hall[r].size(); ++place) {
            const Stack& stack = s.town_hall[r][place];
            const int base = e.town_hall + (int(r) * e.hall_cols + int(place)) * e.stack;
            out[base] = 1;
            out[base + 1 + stack.label] = 1;
            out[base + 1 + LABELS] = float(stack.tiles.size());
            if (!stack.tiles.empty()) out[base + 2 + LABELS + stack.tiles.back()] = 1;
        }
    for (int tile : s.town_discards) out[e.town_discards + tile] = 1;
    if (s.building_in_hand != NONE) out[e.building_in_hand + s.building_in_hand] = 1;

    // the city: usable squares, plot owners, buildings and their owners (relative seats, then public)
    constexpr int SEATS = 4;
    for (const Sq& q : c.board_squares) out[e.city + (q.r * e.city_cols + q.c) * e.square] = 1;
    for (const PlotMark& p : s.plots)
        out[e.city + (p.sq.r * e.city_cols + p.sq.c) * e.square + 1 + rel(p.seat, me, n)] = 1;
    for (const CityTile& t : s.city) {
        const int base = e.city + (t.sq.r * e.city_cols + t.sq.c) * e.square + 1 + SEATS;
        out[base + t.building] = 1;
        out[base + e.buildings + (t.owner < 0 ? SEATS : rel(t.owner, me, n))] = 1;
    }

    // the mines: rocks, tiles and their owners
    for (const RockMark& r : s.rocks) out[e.mines + (r.sq.r * e.mine_cols + r.sq.c) * e.mine_square] = 1;
    for (const MineMark& m : s.mines) {
        const int base = e.mines + (m.sq.r * e.mine_cols + m.sq.c) * e.mine_square;
        out[base + 1 + m.tile] = 1;
        out[base + 1 + e.tiles + rel(m.owner, me, n)] = 1;
    }

    for (int k = 0; k < 4; ++k) {
        out[e.bank + k] = float(s.patrician_bank[k]);
        out[e.pool + k] = float(s.patrician_pool[k]);
        out[e.council + k] = float(s.council[k]);
    }

    // the events revealed so far (none during the setup) and this round's
    if (s.phase != GUILD_SETS && s.phase != GUILD_ROWS) {
        const int shown = std::min(int(s.events.size()), s.round);
        for (int i = 0; i < shown; ++i)
            if (s.events[i] != NONE) out[e.revealed + e.event_index.at(s.events[i])] = 1;
        const int now = round_event(s);
        if (shown > 0 && now != NONE) out[e.current_event + e.event_index.at(now)] = 1;
    }

    out[e.guild_card + s.guild_setup_card - 1] = 1;
    out[e.mine_card + s.mine_setup_card - 1] = 1;
    for (int index : s.guild_sets_left) out[e.sets_left + index] = 1;

    // the pending decision, and what only its seat sees
    const bool own = s.has_pending && viewer == s.pending_seat;
    if (s.has_pending) {
        out[e.kind + s.pending_kind] = 1;
        out[e.owes + rel(s.pending_seat, me, n)] = 1;
    }
    if (own)
        for (int tile : s.drawn) out[e.drawn + tile] = 1;
    if (s.kept_tile != NONE && (own || s.kept_tile >= e.mine_tiles)) out[e.kept + s.kept_tile] = 1;
    if (viewer >= 0 && viewer < int(s.mine_discards_seen.size()))
        for (int tile : s.mine_discards_seen[viewer]) out[e.discarded + tile] = 1;

    // every seat's board, in the viewer's order
    for (int seat = 0; seat < n; ++seat) {
        const Player& p = s.players[seat];
        float* block = out + e.seat0 + rel(seat, me, n) * e.seat_size;
        const float numbers[13] = {
            1, float(p.groschen), float(p.reputation), float(p.points), float(p.mine_ore),
            float(seat_income(s, seat)), float(seat_tax_due(s, seat)), float(p.pelicans),
            float(p.pelicans_used), float(p.miners_pool), float(p.miners_reserve), float(p.plots.size()),
            float(p.buildings.size())};
        std::copy(numbers, numbers + 13, block);
        constexpr int GUILDS = 6;
        for (int g : p.guild_set) block[e.guild_set_at + g] = 1;
        for (size_t r = 0; r < p.guilds.size(); ++r) block[e.guilds_at + int(r) * GUILDS + p.guilds[r]] = 1;
        for (int k = 0; k < 6; ++k) block[e.production_at + k] = float(p.production[k]);
        for (int r = 0; r < 3; ++r) block[e.production_at + 6 + r] = float(p.houses_removed[r]);
        for (int number : p.hand) {
            const auto found = std::find(c.card_numbers.begin(), c.card_numbers.end(), number);
            block[e.hand_at + int(found - c.card_numbers.begin())] = 1;
        }
        for (int tile : p.slots) block[e.slots_at + tile] = 1;
    }

    if (normalized) {
        const float* scale = e.scale.data();
        const float* low = e.low.data();
        for (int i = 0; i < e.size; ++i) out[i] = std::min(std::max(out[i] * scale[i], low[i]), 1.0f);
    }
}

}  // namespace kh
