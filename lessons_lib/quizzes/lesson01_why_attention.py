"""The quiz of lesson 01: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("\"The animal didn't cross the street because it was too tired\": here 'it' is the animal. With "
       "\"too wide\" instead, 'it' is the street. How can attention tell the two apart?",
       ("'it' mixes in the other tokens, weighted by how well their keys match its query.", R,
        "Right. Context enters through the weights. In a real transformer, earlier layers have already "
        "mixed 'tired' or 'wide' into the vector of 'it', so its query differs between the two "
        "sentences and so does the key it matches best."),
       ("It cannot: the vector of 'it' comes from the word 'it' alone, so a model can only guess.", W,
        "Before attention, 'it' does start from the same embedding in both sentences. Attention is "
        "exactly the step that changes this, by mixing in information from the other tokens."),
       ("A grammar rule, written into the model by hand, links a pronoun to the nearest noun.", W,
        "No such rule is written in, and it would fail here: the nearest noun before 'it' is 'street' "
        "in both sentences, which is wrong for 'tired'."),
       ("Attention looks only at the position of 'it' in the sentence.", W,
        "'it' sits at the same position in both sentences, yet the answer differs: the content of the "
        "other words decides."),
       source="seed 004, why attention matters"),
    ask("How does attention differ from looking up a key in a Python dictionary?",
       ("It does not: attention also needs the query to equal one of the keys exactly, or it fails.", W,
        "A poor match never fails in attention; it just gets a small weight. Similarity, not equality, "
        "is what counts."),
       ("Attention returns exactly one stored value, the one whose key is most similar to the query.", W,
        "That would be a hard arg-max lookup. Softmax gives every key a share, so the output mixes "
        "several values; only when one score dwarfs all others does it come close to picking one."),
       ("Attention ignores the keys altogether and returns the plain average of all the values.", W,
        "Equal weights happen only when all the scores in a row are equal. The keys are what make the "
        "weights differ."),
       ("Attention returns a blend of every stored value, weighted by how well each key matches the query.",
        R,
        "Yes, a soft lookup: a dictionary needs an exact match and returns one value; attention compares "
        "the query with every key, good matches get large weights, poor ones small (but not zero) "
        "weights, and the answer is the weighted average of the values."),
       source="seed 004, Q/K/V intuition"),
    ask("In the database picture of attention, which roles do Q, K and V play?",
       ("Q is the content handed back, K is the search request, V is the label a token is found by.", W,
        "The roles are shuffled. The query asks, the key is what the query is compared with, and the "
        "value is what gets handed back."),
       ("Q, K and V are three copies of the same vector, kept apart only to make the code faster.", W,
        "They come from three different learned matrices, so in general they differ; notebook 02 shows "
        "why that matters."),
       ("Q asks, K is what it is compared with, V is what gets handed back.", R,
        "Right: Q searches, K indexes, V carries the payload. The Q·K comparison decides how much of "
        "each V reaches the output."),
       ("K is the content that gets handed back, and V decides where each token looks.", W,
        "It is the other way round: keys set the weights (through Q·Kᵀ), and values are what the "
        "weights average."),
       source="seed 004, Q/K/V intuition and key takeaways"),
)
