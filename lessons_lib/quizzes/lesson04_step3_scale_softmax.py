"""The quiz of lesson 04: its questions as data (see :mod:`lessons_lib.quizzes.model`)."""

from __future__ import annotations

from .model import R, W, ask

QUESTIONS = (
    ask("Why are the scores divided by √d_k before the softmax?",
       ("So that each row of weights adds up to 1 before the values are mixed.", W,
        "Softmax does that on its own; scaling does not change whether rows add up to 1."),
       ("To make the computation faster, since smaller numbers are cheaper to handle.", W,
        "It costs one extra multiplication per score; its purpose is numerical, not speed."),
       ("Because d_k is the number of tokens, and an average has to divide by the count.", W,
        "d_k is the length of the query and key vectors, not the number of tokens; and it is softmax "
        "that turns the scores into weights."),
       ("The spread of q·k grows like √d_k; dividing keeps it near 1 for any d_k.", R,
        "Right. With query and key entries of mean 0 and variance 1, a dot product adds up d_k terms, so "
        "its variance is d_k and its typical size √d_k. Without the division, wider heads would produce "
        "larger scores, and softmax would saturate."),
       source="seed 000, step 3; seed 004, step 2"),
    ask("What happens to softmax when the scores in a row are very large in size, as with d_k = 512 "
       "and no scaling?",
       ("It saturates: nearly one-hot, and its gradients nearly vanish.", R,
        "Yes. Almost all the weight goes to the largest score and the others get nearly zero; a "
        "one-hot softmax barely changes when the scores change, so learning slows down."),
       ("It becomes uniform: with huge scores every token ends up with the same weight.", W,
        "That is the opposite extreme, reached when all the scores are close to zero (for instance "
        "after dividing by too much)."),
       ("The rows stop adding up to 1, because the exponentials overflow to infinity.", W,
        "Softmax rows always add up to 1 (up to rounding), and a safe softmax never overflows. What "
        "changes is how the weight is spread."),
       ("Some weights turn negative, since very large scores push the softmax below zero.", W,
        "exp of any number is positive, so softmax weights are never negative."),
       source="seed 000, step 3 and symbol table"),
    ask("A classmate divides by d_k instead of √d_k. With d_k = 256, what do the weights look like?",
       ("Exactly the same: the two differ only by a constant.", W,
        "Softmax ignores a constant added to a row, not a constant factor. Dividing by a larger number "
        "makes the distribution flatter."),
       ("Saturated: almost one-hot, since the scores come out too large for the softmax.", W,
        "That is what too little scaling does. Dividing by d_k is too much scaling."),
       ("Nearly uniform: the scores shrink so much that they all sit near 0.", R,
        "Right. They shrink by 256 instead of 16, so they all sit near 0, the differences between them "
        "vanish, and attention cannot focus on anything."),
       source="seed 000, step 3"),
    ask("After the softmax, what holds for every row of the weight matrix?",
       ("Every column adds up to 1, so each key hands out one unit of attention.", W,
        "Softmax runs along each row (over the keys, for one query). A column can add up to anything "
        "between 0 and the number of queries."),
       ("Its entries lie between 0 and 1 and add up to 1.", R,
        "Yes: a probability distribution over the keys; row i says what share of its attention query i "
        "gives to each key."),
       ("The diagonal entry is the largest: each token attends most to itself.", W,
        "That happens often but is not guaranteed: in the 'it' example the largest weight goes to "
        "'animal' or 'street'."),
       ("The entries add up to d_k.", W,
        "d_k plays no part in the softmax's normalisation; the entries add up to 1."),
       source="seed 000, step 3; seed 004, step 3"),
)
