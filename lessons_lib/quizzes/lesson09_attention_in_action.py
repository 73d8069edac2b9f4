"""The quiz of lesson 09: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("After training, the referent head gives “animal” a weight of 1.00 in sentence A. What does that "
       "weight come from?",
       ("The model understands that animals get tired, which it learned from its sentences.", W,
        "It has never seen an animal: it multiplies vectors it learned from 2,000 made-up sentences. "
        "Give it nonsense (“the street didn't cross the road because it was too sleepy”) and it "
        "still answers, just as confidently."),
       ("“animal” is the most important word of the sentence, for every head of the model.", W,
        "Weights belong to one head and one query: other heads send “it” to <s> or to “because”."),
       ("One dot product, of the query of “it” with the key of “animal”, beats all the others by far.",
        R,
        "Right: arithmetic, not awareness. That dot product is far larger than any other, and softmax "
        "turns the gap into nearly all of the weight. Layers 1 and 2 change the vectors of “it” and of "
        "the nouns so that this one dot product wins."),
       ("The model memorised sentence A while training, so it recalls where “it” points.", W,
        "“animal” and “street” never appear together in a training sentence: the pair is held out."),
       source="seed 004, why it matters and misconceptions"),
    ask("Held-out accuracy is nearly 100% although every held-out sentence pairs an animal and a place "
       "that never met in training. What does that show?",
       ("It learned a rule over kinds of words, which carries over to new pairs.", R,
        "Yes: the kind of the adjective (tired → an animal, wide → a road) decides which noun's key "
        "matches the query of “it”. Every single word was seen in training, only the combinations are "
        "new, and a rule over word kinds handles new combinations."),
       ("It memorised each pair of an animal and a place during the 300 training steps.", W,
        "It cannot have: no held-out pair occurs in any training sentence."),
       ("The answer is always the first noun of the sentence, and the model learned that.", W,
        "The first noun is the referent in about half of the sentences (measured in the notebook): "
        "the word order varies on purpose."),
       ("It reads the answer off the position of “it”, which is the same in every sentence.", W,
        "“it” moves around (fillers, eight templates), and the referent sits on either side of the "
        "other noun."),
       source="seed 004, why it matters"),
    ask("A head whose row must sum to 1 has nothing to fetch for a dummy “it” (“it was too late”). "
       "Where does its weight go, with and without an off slot?",
       ("Without an off slot it spreads evenly over the words; with one, nothing changes.", W,
        "The experiment shows the opposite: plain softmax parks about 0.9 of the weight on <s>, "
        "and the off slot takes almost all of it away from the words."),
       ("In both cases it goes to the nouns, the only words with something to fetch.", W,
        "Fetching a noun would add that noun's value where the answer must be zero; training pushes "
        "the weight away from them."),
       ("In both cases it goes to <s>.", W,
        "With an off slot the weight on <s> falls close to 0: the head no longer needs a sink."),
       ("Without an off slot, onto the sink <s>; with one, to nothing.", R,
        "Right: plain softmax parks the weight on <s>, whose value shrinks toward 0; with an off slot "
        "the weights on all words, <s> included, add up to almost 0. The sink is a way to add (almost) "
        "nothing when the rows must sum to 1; given a way to attend to nothing, the head takes that "
        "instead."),
       source="seed 004, common misconceptions (first token as anchor); notebook 09"),
)
