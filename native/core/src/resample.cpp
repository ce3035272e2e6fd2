// The hidden parts of a state drawn again, in the order and with the calls of kutnahora.engine.resample
// (_draw_town_hall, _draw_mine_tiles, _draw_events, then the game's own generator), so that the same
// search generator gives the same state. What is hidden is worked out once per observation in Python
// (kutnahora.native.resampling) and given as a plan of ints.
#include <cmath>
#include <unordered_set>

#include "rules.hpp"

namespace kh {

namespace {

struct Plan {
    const std::vector<int>& v;
    size_t i = 0;
    int next() {
        if (i >= v.size()) throw std::invalid_argument("the resampling plan ends too early");
        return v[i++];
    }
    std::vector<int> list() {
        int n = next();
        if (n < 0 || size_t(n) > v.size()) throw std::invalid_argument("a length in the plan is out of range");
        std::vector<int> out(n);
        for (int& x : out) x = next();
        return out;
    }
};

// random.Random.sample(population, k), CPython 3.11 and later
std::vector<int> sample(PyRandom& rng, const std::vector<int>& population, int k) {
    int n = int(population.size());
    if (k < 0 || k > n) throw std::invalid_argument("sample larger than population");
    std::vector<int> result(k);
    long long setsize = 21;
    if (k > 5) setsize += (long long)std::pow(4.0, std::ceil(std::log(k * 3.0) / std::log(4.0)));
    if (n <= setsize) {
        std::vector<int> pool = population;
        for (int i = 0; i < k; ++i) {
            int j = rng.randbelow(n - i);
            result[i] = pool[j];
            pool[j] = pool[n - i - 1];
        }
    } else {
        std::unordered_set<int> selected;
        for (int i = 0; i < k; ++i) {
            int j = rng.randbelow(n);
            while (selected.count(j)) j = rng.randbelow(n);
            selected.insert(j);
            result[i] = population[j];
        }
    }
    return result;
}

}  // namespace

void resample_hidden(State& s, const std::vector<int>& plan_ints, PyRandom& rng) {
    Plan plan{plan_ints};
    // the town hall: every stack below its top tile, then the red-patrician buildings to come
    int rows = plan.next();
    s.town_hall.assign(rows, {});
    for (auto& row : s.town_hall) {
        int stacks = plan.next();
        for (int k = 0; k < stacks; ++k) {
            int label = plan.next(), top = plan.next();
            std::vector<int> bottom = plan.list();
            std::vector<int> rest = plan.list();
            rng.shuffle(rest);
            Stack stack{label, bottom};
            stack.tiles.insert(stack.tiles.end(), rest.begin(), rest.end());
            stack.tiles.push_back(top);
            row.push_back(std::move(stack));
        }
    }
    s.red_stack = plan.list();
    rng.shuffle(s.red_stack);
    // the mine tiles: the stack, the discard pile, the tiles another seat holds
    std::vector<int> stack, rest;
    if (plan.next() == 0) {  // never reshuffled: tier by tier, the stack's tiers as set up
        int tiers = plan.next();
        for (int t = 0; t < tiers; ++t) {
            int count = plan.next();
            std::vector<int> candidates = plan.list();
            std::vector<int> chosen = sample(rng, candidates, count);
            stack.insert(stack.end(), chosen.begin(), chosen.end());
            std::unordered_set<int> taken(chosen.begin(), chosen.end());
            for (int c : candidates)
                if (!taken.count(c)) rest.push_back(c);
        }
    } else {
        int stack_size = plan.next();
        std::vector<int> hidden = plan.list();
        stack = sample(rng, hidden, stack_size);
        std::unordered_set<int> taken(stack.begin(), stack.end());
        for (int h : hidden)
            if (!taken.count(h)) rest.push_back(h);
    }
    rng.shuffle(rest);
    int unknown_discards = plan.next();
    std::vector<int> discard = plan.list();  // the tiles the viewer put there, then some unseen
    if (unknown_discards < 0 || unknown_discards > int(rest.size())) throw std::invalid_argument("bad discards");
    discard.insert(discard.end(), rest.begin(), rest.begin() + unknown_discards);
    rng.shuffle(discard);
    s.mine_stack = std::move(stack);
    s.mine_discard = std::move(discard);
    std::vector<int> hand(rest.begin() + unknown_discards, rest.end());
    int holder = plan.next();  // 0: nobody else holds tiles, 1: choosing (MINE_TILE), 2: placing one
    // the events of the rounds to come
    if (plan.next()) {
        int rounds = plan.next(), red_arrival = plan.next(), revealed_rounds = plan.next();
        std::vector<int> revealed = plan.list();
        int sizes[2] = {plan.next(), plan.next()};
        std::vector<int> unseen[2] = {plan.list(), plan.list()};
        for (auto& cards : unseen) rng.shuffle(cards);
        int dealt[2] = {0, 0};
        size_t next_revealed = 0;
        s.events.clear();
        for (int round = 1; round <= rounds; ++round) {
            int deck = round <= red_arrival ? 0 : 1;
            if (round == rounds || dealt[deck] >= sizes[deck]) {
                s.events.push_back(NONE);
                continue;
            }
            dealt[deck] += 1;
            if (round <= revealed_rounds) {
                if (next_revealed >= revealed.size()) throw std::invalid_argument("an event was not revealed");
                s.events.push_back(revealed[next_revealed++]);
            } else {
                if (unseen[deck].empty()) throw std::invalid_argument("no unseen event is left");
                s.events.push_back(unseen[deck].back());
                unseen[deck].pop_back();
            }
        }
    }
    if (plan.i != plan_ints.size()) throw std::invalid_argument("the resampling plan is longer than expected");
    // the game's own generator: random.Random(rng.getrandbits(64))
    uint32_t low = rng.next32(), high = rng.next32();
    std::vector<uint32_t> key{low};
    if (high) key.push_back(high);
    s.rng = PyRandom();
    s.rng.seed(key);
    if (holder == 1) {
        s.drawn = hand;
        repose_mine_tile(s);
    } else if (holder == 2) {
        if (hand.empty()) throw std::invalid_argument("no tile is held");
        s.kept_tile = hand[0];
    }
}

}  // namespace kh
